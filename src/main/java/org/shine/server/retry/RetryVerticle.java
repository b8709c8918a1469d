package org.shine.server.retry;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.time.Clock;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.delivery.DeliveryModule;
import org.shine.server.dm.SignatureVerifier;

/** Wires the retry worker to its periodic timer ({@code delivery.workerPeriodMs}). */
public final class RetryVerticle extends VerticleBase {
  private final AppConfig config;
  private final Clock clock;
  private final SignatureVerifier verifier;
  private long timer = -1;
  private RetryWorker worker;

  public RetryVerticle(AppConfig config, Clock clock, SignatureVerifier verifier) {
    this.config = config;
    this.clock = clock;
    this.verifier = verifier;
  }

  @Override
  public Future<?> start() {
    DeliveryModule module = new DeliveryModule(vertx, config, Database.sharedPool(vertx, config.db()), clock,
        verifier);
    worker = new RetryWorker(config, module.deliveries(), module.attempts(), clock);
    return module.start().onSuccess(v -> timer = vertx.setPeriodic(config.delivery().workerPeriodMs(),
        id -> worker.tick()));
  }

  /** No new tick; the running one finishes its attempts (each bounded by the call timeout). */
  @Override
  public Future<?> stop() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    return worker == null ? Future.succeededFuture() : worker.idle();
  }
}
