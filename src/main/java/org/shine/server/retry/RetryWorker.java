package org.shine.server.retry;

import io.vertx.core.Future;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DeliveryRepository;
import org.shine.server.db.DeliveryRepository.AttemptResult;
import org.shine.server.db.DeliveryRepository.ClaimedDelivery;
import org.shine.server.db.DeliveryRepository.RowKey;
import org.shine.server.db.StorageHealth;
import org.shine.server.delivery.AttemptRequest;
import org.shine.server.delivery.DeliveryTask;
import org.shine.server.delivery.EngineClient;
import org.shine.server.model.DeliveryState;
import org.shine.server.util.Backoff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Claims rows for the node's delivery engine (seed §5, PROTOCOL §7.4, §7.6). A tick claims due rows (partial index,
 * lease, row version) up to the engine's free places and hands each its next scheduled attempt; a claim that filled
 * those places is followed by another as soon as its attempts are over, up to {@value #MAX_ROUNDS_PER_TICK} rounds,
 * so a backlog left by a burst drains at the engine's pace, not one claim per period. A tick that finds the previous
 * one still running skips. When a recipient server comes back, the accepted rows routed to it are
 * claimed whether due or not and get an extra attempt, in rounds until none is left that was not touched since it
 * came back. A tick that fails (the database is down) backs the timer off: the next tick waits twice the period,
 * then four times, up to {@value #MAX_BACKOFF_PERIODS} periods, with one line when it starts and one when a tick
 * succeeds again; {@link #resume()} (the database is back) ends the wait at once. Confined to one event loop.
 */
public final class RetryWorker {
  private static final Logger LOG = LoggerFactory.getLogger(RetryWorker.class);
  static final int MAX_BACKOFF_PERIODS = 8;
  /** Claims of one tick at most: a tick ends, and the next period's tick goes on, after this many full rounds. */
  static final int MAX_ROUNDS_PER_TICK = 16;
  private final AppConfig config;
  private final DeliveryRepository deliveries;
  private final EngineClient engine;
  private final Clock clock;
  private final StorageHealth health;
  private final Backoff pacing;
  private final Set<String> returning = new HashSet<>();
  private Future<Integer> current = Future.succeededFuture(0);
  private boolean stopped;

  public RetryWorker(AppConfig config, DeliveryRepository deliveries, EngineClient engine, Clock clock,
      StorageHealth health) {
    this.config = Objects.requireNonNull(config);
    this.deliveries = Objects.requireNonNull(deliveries);
    this.engine = Objects.requireNonNull(engine);
    this.clock = Objects.requireNonNull(clock);
    this.health = Objects.requireNonNull(health);
    long period = config.delivery().workerPeriodMs();
    this.pacing = new Backoff(period, period * MAX_BACKOFF_PERIODS);
  }

  /** Runs one tick; completes with the number of rows it claimed (0 when skipped or backing off). */
  public Future<Integer> tick() {
    if (stopped || !current.isComplete() || !pacing.due(System.nanoTime())) {
      return Future.succeededFuture(0);
    }
    if (room() <= 0) {
      return Future.succeededFuture(0);
    }
    current = claimDueRounds(1, 0)
        .onComplete(ar -> {
          if (ar.failed()) {
            tickFailed(ar.cause());
          } else {
            if (pacing.succeeded()) {
              LOG.info("retry timer resumed its period of {} ms", config.delivery().workerPeriodMs());
            }
            if (ar.result() > 0) {
              LOG.debug("retry tick ran {} attempts", ar.result());
            }
          }
        });
    return current;
  }

  /**
   * One claim of due rows up to the engine's free places, their attempts, and another round while a claim filled
   * its places (more may be due) and the tick has rounds left; completes with the rows claimed in all rounds.
   */
  private Future<Integer> claimDueRounds(int round, int claimedSoFar) {
    int room = room();
    if (room <= 0 || stopped) {
      return Future.succeededFuture(claimedSoFar);
    }
    long now = clock.millis();
    return deliveries.claimDue(now, config.delivery().leaseMs(), room)
        .compose(claimed -> runAll(claimed, RetryWorker::scheduled, now))
        .compose(n -> n < room || round >= MAX_ROUNDS_PER_TICK
            ? Future.succeededFuture(claimedSoFar + n)
            : claimDueRounds(round + 1, claimedSoFar + n));
  }

  /** No new tick or round; completes when the running tick's attempts are over. */
  public Future<Void> stop() {
    stopped = true;
    return idle();
  }

  /** The database is back: the next tick runs now instead of after the backoff. */
  public Future<Integer> resume() {
    if (pacing.reset()) {
      LOG.info("retry timer resumed: the database is back");
    }
    return tick();
  }

  /** Whether the timer is waiting longer than its period after failed ticks. */
  public boolean backingOff() {
    return pacing.backingOff();
  }

  private void tickFailed(Throwable cause) {
    health.report(cause);
    long now = System.nanoTime();
    if (pacing.failed(now)) {
      LOG.warn("retry timer backs off (up to {} ms between ticks) until a tick succeeds: {}",
          config.delivery().workerPeriodMs() * MAX_BACKOFF_PERIODS, cause.toString());
    } else {
      LOG.debug("retry tick failed again [failures: {}, next in: {} ms]: {}", pacing.failures(), pacing.delayMs(),
          cause.toString());
    }
  }

  /**
   * A recipient server at {@code url} answers again (PROTOCOL §7.6): every accepted row routed to it gets an extra
   * attempt now; completes with the number of rows claimed. One round per server at a time.
   */
  public Future<Integer> serverReturned(String url) {
    if (!returning.add(url)) {
      return Future.succeededFuture(0);
    }
    long since = clock.millis();
    return claimRoundsOf(url, since, 0)
        .onSuccess(n -> {
          if (n > 0) {
            LOG.info("peer is back: {} accepted deliveries attempted again [url: {}]", n, url);
          }
        })
        .onFailure(failure -> {
          health.report(failure);
          LOG.warn("extra attempts for a returning peer failed [url: {}]: {}", url, failure.toString());
        })
        .eventually(() -> {
          returning.remove(url);
          return Future.succeededFuture();
        });
  }

  private Future<Integer> claimRoundsOf(String url, long since, int claimedSoFar) {
    int room = room();
    if (room <= 0) {
      // the engine is full: what is left keeps its schedule (the next tick or return takes it)
      return Future.succeededFuture(claimedSoFar);
    }
    long now = clock.millis();
    return deliveries.claimRoutedTo(url, since, now, config.delivery().leaseMs(), room)
        .compose(claimed -> runAll(claimed, RetryWorker::extra, now))
        .compose(n -> n == 0 ? Future.succeededFuture(claimedSoFar) : claimRoundsOf(url, since, claimedSoFar + n));
  }

  /** Completes when the running tick (if any) has finished. */
  public Future<Void> idle() {
    return current.<Void>mapEmpty().otherwiseEmpty();
  }

  private int room() {
    return Math.min(engine.free(), config.delivery().maxInFlight());
  }

  private Future<Integer> runAll(List<ClaimedDelivery> claimed, Function<ClaimedDelivery, DeliveryTask> taskOf,
      long now) {
    List<Future<?>> runs = new ArrayList<>(claimed.size());
    List<AttemptResult> replaced = new ArrayList<>();
    for (ClaimedDelivery row : claimed) {
      if (row.pairBlob() == null) {
        // a newer revision replaced this one: its own row carries the delivery now
        replaced.add(new AttemptResult(new RowKey(row.baseKey(), row.revision()), row.rowVersion(),
            DeliveryState.FAILED, row.attemptsDone(), null));
      } else if (engine.reserve()) {
        runs.add(engine.submitReserved(new AttemptRequest(taskOf.apply(row), true, null)));
      }
      // no place left: the lease runs out and a later tick takes the row
    }
    if (!replaced.isEmpty()) {
      runs.add(deliveries.finishAll(replaced, now));
    }
    return Future.join(runs).otherwiseEmpty().map(v -> claimed.size());
  }

  private static DeliveryTask scheduled(ClaimedDelivery row) {
    String[] parts = row.baseKey().split("\\|", -1);
    return DeliveryTask.scheduled(row.baseKey(), row.revision(), parts[0], parts[1], row.pairBlob(),
        row.acceptedAtMs(), row.attemptsDone() + 1, row.rowVersion());
  }

  private static DeliveryTask extra(ClaimedDelivery row) {
    String[] parts = row.baseKey().split("\\|", -1);
    return new DeliveryTask(row.baseKey(), row.revision(), parts[0], parts[1], row.pairBlob(), row.acceptedAtMs(),
        row.attemptsDone(), row.rowVersion(), true, row.nextAttemptAtMs());
  }
}
