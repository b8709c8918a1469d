package org.shine.server.retry;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.time.Clock;
import java.util.Objects;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DeliveryRepository;
import org.shine.server.db.StorageHealth;
import org.shine.server.delivery.EngineClient;

/**
 * Wires the retry worker to its periodic timer ({@code delivery.workerPeriodMs}) and to
 * {@link Addresses#PEER_UP} (a recipient server answers again) and to the database's return (the worker's backoff
 * ends); the attempts run in the node's delivery engine.
 */
public final class RetryVerticle extends VerticleBase {
  private final AppConfig config;
  private final Clock clock;
  private final DeliveryRepository deliveries;
  private final EngineClient engine;
  private final StorageHealth health;
  private long timer = -1;
  private RetryWorker worker;
  private Runnable stopListening = () -> { };

  /** {@code engine}: the node's client of its one delivery engine, shared by every producer of attempts. */
  public RetryVerticle(AppConfig config, Clock clock, DeliveryRepository deliveries, EngineClient engine,
      StorageHealth health) {
    this.config = Objects.requireNonNull(config);
    this.clock = Objects.requireNonNull(clock);
    this.deliveries = Objects.requireNonNull(deliveries);
    this.engine = Objects.requireNonNull(engine);
    this.health = Objects.requireNonNull(health);
  }

  @Override
  public Future<?> start() {
    worker = new RetryWorker(config, deliveries, engine, clock, health);
    timer = vertx.setPeriodic(config.delivery().workerPeriodMs(), id -> worker.tick());
    stopListening = health.onUp(worker::resume);
    return Future.all(
        vertx.eventBus().<String>localConsumer(Addresses.PEER_UP, m -> worker.serverReturned(m.body())).completion(),
        BusReplies.serve(vertx.eventBus(), Addresses.RETRY_PEER_NOW, worker::serverReturned));
  }

  /** No new tick or round; the running one finishes its attempts (each bounded by the call timeout). */
  @Override
  public Future<?> stop() {
    stopListening.run();
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    return worker == null ? Future.succeededFuture() : worker.stop();
  }
}
