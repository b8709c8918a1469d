package org.shine.server.retry;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.time.Clock;
import java.util.Objects;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.db.DeliveryRepository;
import org.shine.server.db.StorageHealth;
import org.shine.server.delivery.AttemptSlots;
import org.shine.server.delivery.EngineClient;

/**
 * Wires the retry worker to its periodic timer ({@code delivery.workerPeriodMs}) and to
 * {@link Addresses#PEER_UP} (a recipient server answers again) and to the database's return (the worker's backoff
 * ends); the attempts run in the node's delivery engine.
 */
public final class RetryVerticle extends VerticleBase {
  private final AppConfig config;
  private final Clock clock;
  private final AttemptSlots slots;
  private final StorageHealth health;
  private long timer = -1;
  private RetryWorker worker;
  private Runnable stopListening = () -> { };

  public RetryVerticle(AppConfig config, Clock clock, AttemptSlots slots, StorageHealth health) {
    this.config = Objects.requireNonNull(config);
    this.clock = Objects.requireNonNull(clock);
    this.slots = Objects.requireNonNull(slots);
    this.health = Objects.requireNonNull(health);
  }

  @Override
  public Future<?> start() {
    EngineClient engine = new EngineClient(vertx.eventBus(), slots, config.delivery());
    worker = new RetryWorker(config, new DeliveryRepository(Database.sharedPool(vertx, config.db())), engine, clock,
        health);
    timer = vertx.setPeriodic(config.delivery().workerPeriodMs(), id -> worker.tick());
    stopListening = health.onUp(worker::resume);
    return Future.all(
        vertx.eventBus().<String>localConsumer(Addresses.PEER_UP, m -> worker.serverReturned(m.body())).completion(),
        vertx.eventBus().<String>localConsumer(Addresses.RETRY_PEER_NOW,
            m -> BusReplies.replyWith(m, worker.serverReturned(m.body()))).completion());
  }

  /** No new tick; the running one finishes its attempts (each bounded by the call timeout). */
  @Override
  public Future<?> stop() {
    stopListening.run();
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    return worker == null ? Future.succeededFuture() : worker.idle();
  }
}
