package org.shine.server.delivery;

import io.vertx.core.Future;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import org.shine.server.db.DeliveryRepository;
import org.shine.server.db.DeliveryRepository.AttemptResult;
import org.shine.server.db.DeliveryRepository.RowKey;
import org.shine.server.db.MicroBatcher;
import org.shine.server.metrics.AttemptOutcome;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.metrics.Transition;
import org.shine.server.model.DeliverySchedule;
import org.shine.server.model.DeliveryState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records what an attempt of the {@link DeliveryEngine} made of its row: delivered, the next schedule point, or
 * failed after the last. Results are written in batches (one statement for all results ready together), each only
 * if the row is still the one claimed; a state change owed to the sender carries its hub entry in the same
 * statement and is pushed to the sender's sessions. Confined to the engine verticle's event loop.
 */
final class AttemptRecorder {
  private static final Logger LOG = LoggerFactory.getLogger(AttemptRecorder.class);
  private static final int MAX_BATCH = 256;
  private static final int CONCURRENT_BATCHES = 2;
  private final DeliveryRepository deliveries;
  private final Events events;
  private final Clock clock;
  private final ShineMetrics metrics;
  private final DeliverySchedule schedule;
  private final MicroBatcher<AttemptResult, Boolean> results;

  /** {@code capacity}: the node's attempt places; every result comes from an attempt holding one. */
  AttemptRecorder(DeliveryRepository deliveries, Events events, Clock clock, ShineMetrics metrics,
      DeliverySchedule schedule, int capacity) {
    this.deliveries = Objects.requireNonNull(deliveries);
    this.events = Objects.requireNonNull(events);
    this.clock = Objects.requireNonNull(clock);
    this.metrics = Objects.requireNonNull(metrics);
    this.schedule = Objects.requireNonNull(schedule);
    // every result comes from an attempt that still holds its slot, so this queue never overflows
    this.results = new MicroBatcher<>(this::recordBatch, AttemptResult::key, MAX_BATCH, CONCURRENT_BATCHES,
        capacity);
  }

  /** Records the outcome of {@code task}; completes with the state stored. */
  Future<DeliveryState> record(DeliveryTask task, boolean acked, boolean notifySender) {
    AttemptResult result = resultOf(task, acked, notifySender);
    return results.submit(result).compose(recorded -> {
      if (!recorded) {
        metrics.attempted(task.attempt(), task.extra(), AttemptOutcome.SUPERSEDED);
        // another worker took the row meanwhile: report what is stored, not what this attempt saw
        LOG.debug("attempt result dropped: row changed meanwhile [outgoingKey: {}]", task.statusKey());
        return deliveries.stateOf(task.baseKey(), task.revision()).map(stored -> stored.orElse(result.state()));
      }
      DeliveryState state = result.state();
      metrics.attempted(task.attempt(), task.extra(), acked ? AttemptOutcome.DELIVERED : AttemptOutcome.NOT_DELIVERED);
      if (state == DeliveryState.DELIVERED) {
        metrics.transition(Transition.DELIVERED);
      } else if (state == DeliveryState.FAILED) {
        metrics.transition(Transition.FAILED);
      }
      LOG.debug("attempt {}{} done [outgoingKey: {}, deliveryState: {}]", task.attempt(), task.extra() ? " (extra)"
          : "", task.statusKey(), state.wire());
      if (owesStateChange(task, state, notifySender)) {
        events.pushStateChanged(task.sender(), task.baseKey(), state);
      }
      if (state == DeliveryState.FAILED) {
        LOG.info("delivery failed after {} attempts [outgoingKey: {}]", task.attempt(), task.statusKey());
      }
      return Future.succeededFuture(state);
    });
  }

  /**
   * A final state of a message (not a receipt) is owed to the sender's sessions and hub queue, unless the answer to
   * the sender's own request carries it ({@code notifySender} false).
   */
  private static boolean owesStateChange(DeliveryTask task, DeliveryState state, boolean notifySender) {
    return state != DeliveryState.ACCEPTED && notifySender && !task.receipt();
  }

  /**
   * What an attempt's outcome makes of its row: delivered, the next schedule point, or failed after the last; a
   * state change owed to the sender carries its hub entry, written in the same statement as the state.
   */
  private AttemptResult resultOf(DeliveryTask task, boolean acked, boolean notifySender) {
    AttemptResult result = outcomeOf(task, acked);
    if (!owesStateChange(task, result.state(), notifySender)) {
      return result;
    }
    return new AttemptResult(result.key(), result.claimedVersion(), result.state(), result.attempts(),
        result.nextAttemptAtMs(), events.stateChangedEntry(task.sender(), task.baseKey(), result.state()));
  }

  private AttemptResult outcomeOf(DeliveryTask task, boolean acked) {
    RowKey key = new RowKey(task.baseKey(), task.revision());
    if (acked) {
      return new AttemptResult(key, task.rowVersion(), DeliveryState.DELIVERED, task.attempt(), null);
    }
    if (task.extra()) {
      return new AttemptResult(key, task.rowVersion(), DeliveryState.ACCEPTED, task.attempt(),
          task.nextAttemptAtMs());
    }
    OptionalLong next = schedule.nextAfter(task.acceptedAtMs(), task.attempt());
    return next.isPresent()
        ? new AttemptResult(key, task.rowVersion(), DeliveryState.ACCEPTED, task.attempt(), next.getAsLong())
        : new AttemptResult(key, task.rowVersion(), DeliveryState.FAILED, task.attempt(), null);
  }

  private Future<List<Boolean>> recordBatch(List<AttemptResult> batch) {
    return deliveries.finishAll(batch, clock.millis()).map(recorded -> {
      List<Boolean> answers = new ArrayList<>(batch.size());
      for (AttemptResult result : batch) {
        answers.add(recorded.contains(result.key()));
      }
      return answers;
    });
  }
}
