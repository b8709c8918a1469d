package org.shine.server.retry;

import io.vertx.core.Future;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DeliveryRepository;
import org.shine.server.db.DeliveryRepository.ClaimedDelivery;
import org.shine.server.delivery.DeliveryAttempts;
import org.shine.server.delivery.DeliveryState;
import org.shine.server.delivery.DeliveryTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One tick of the retry worker (seed §5): claim due rows (partial index, lease, row version) up to the free
 * attempt capacity, run each claimed row's next attempt, and finish when all of them have. A tick that finds the
 * previous one still running skips. Confined to one event loop.
 */
public final class RetryWorker {
  private static final Logger LOG = LoggerFactory.getLogger(RetryWorker.class);
  private final AppConfig config;
  private final DeliveryRepository deliveries;
  private final DeliveryAttempts attempts;
  private final Clock clock;
  private Future<Integer> current = Future.succeededFuture(0);

  public RetryWorker(AppConfig config, DeliveryRepository deliveries, DeliveryAttempts attempts, Clock clock) {
    this.config = Objects.requireNonNull(config);
    this.deliveries = Objects.requireNonNull(deliveries);
    this.attempts = Objects.requireNonNull(attempts);
    this.clock = Objects.requireNonNull(clock);
  }

  /** Runs one tick; completes with the number of rows it claimed (0 when skipped). */
  public Future<Integer> tick() {
    if (!current.isComplete()) {
      return Future.succeededFuture(0);
    }
    int room = Math.min(attempts.capacity(), config.delivery().maxInFlight());
    if (room <= 0) {
      return Future.succeededFuture(0);
    }
    long now = clock.millis();
    current = deliveries.claimDue(now, config.delivery().leaseMs(), room)
        .compose(claimed -> {
          List<Future<?>> runs = new ArrayList<>(claimed.size());
          for (ClaimedDelivery row : claimed) {
            runs.add(run(row, now));
          }
          return Future.join(runs).otherwiseEmpty().map(v -> claimed.size());
        })
        .onComplete(ar -> {
          if (ar.failed()) {
            LOG.warn("retry tick failed: {}", ar.cause().toString());
          } else if (ar.result() > 0) {
            LOG.debug("retry tick ran {} attempts", ar.result());
          }
        });
    return current;
  }

  /** Completes when the running tick (if any) has finished. */
  public Future<Void> idle() {
    return current.<Void>mapEmpty().otherwiseEmpty();
  }

  private Future<?> run(ClaimedDelivery row, long now) {
    if (row.pairBlob() == null) {
      // a newer revision replaced this one: its own row carries the delivery now
      return deliveries.finish(row.baseKey(), row.revision(), row.rowVersion(), DeliveryState.FAILED,
          row.attemptsDone(), null, now);
    }
    String[] parts = row.baseKey().split("\\|", -1);
    DeliveryTask task = new DeliveryTask(row.baseKey(), row.revision(), parts[0], parts[1], row.pairBlob(),
        row.acceptedAtMs(), row.attemptsDone() + 1, row.rowVersion());
    if (!attempts.reserve()) {
      return Future.succeededFuture();
    }
    return attempts.submitReserved(task, true);
  }
}
