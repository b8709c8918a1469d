package org.shine.server.hub;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import java.time.Clock;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.shine.server.db.HubRepository.Head;
import org.shine.server.db.HubRepository.QueuedEvent;

/**
 * One long poll waiting for its user's next event (PROTOCOL §10), on the event loop that took the poll. It looks at
 * the head of the queue when the wait starts, on every wake-up (an event queued, acked or given back, published on
 * any node), and once when a head handed out to another poll becomes visible again — never on a fixed beat, so the
 * thousands of idle polls a node may hold cost the database nothing until their waits end. The wait ends with the
 * event, or with null after {@code holdMs}.
 */
final class PollWait {
  /** A look due at a head's visibility time is taken at least this late (clocks of nodes differ by a little). */
  static final long MIN_LOOK_DELAY_MS = 10;
  private final Vertx vertx;
  private final Clock clock;
  private final Supplier<Future<Head>> look;
  private final Consumer<QueuedEvent> giveBack;
  private final Promise<QueuedEvent> result = Promise.promise();
  private long visibilityTimer = -1;
  private boolean looking;
  private boolean lookAgain;

  /**
   * {@code look}: takes the head if visible ({@code HubRepository.takeHead}); {@code giveBack}: makes an event taken
   * after the wait ended visible again, so that it is not hidden unseen.
   */
  PollWait(Vertx vertx, Clock clock, Supplier<Future<Head>> look, Consumer<QueuedEvent> giveBack) {
    this.vertx = Objects.requireNonNull(vertx);
    this.clock = Objects.requireNonNull(clock);
    this.look = Objects.requireNonNull(look);
    this.giveBack = Objects.requireNonNull(giveBack);
  }

  /**
   * Waits on {@code wake} (a consumer of the user's wake-up address, not yet given a handler), looking once it is
   * registered; the consumer is unregistered at the end.
   */
  Future<QueuedEvent> await(MessageConsumer<String> wake, long holdMs) {
    wake.handler(m -> lookNow());
    long end = vertx.setTimer(holdMs, id -> result.tryComplete(null));
    // a wake-up published before the consumer was registered would be lost: look once it is
    return wake.completion().compose(v -> {
      lookNow();
      return result.future();
    }).onComplete(ar -> {
      vertx.cancelTimer(end);
      cancelVisibilityTimer();
      wake.unregister();
    });
  }

  private void lookNow() {
    if (result.future().isComplete()) {
      return;
    }
    if (looking) {
      // one look at a time; a wake-up during a look earns one more after it
      lookAgain = true;
      return;
    }
    looking = true;
    look.get().onComplete(ar -> {
      looking = false;
      if (ar.failed()) {
        result.tryFail(ar.cause());
        return;
      }
      Head head = ar.result();
      if (head.taken() != null) {
        if (!result.tryComplete(head.taken())) {
          // the wait ended while this look was in flight: give the event back rather than hide it unseen
          giveBack.accept(head.taken());
        }
        return;
      }
      lookAtVisibility(head);
      if (lookAgain) {
        lookAgain = false;
        lookNow();
      }
    });
  }

  /** One timer at the time the head in flight becomes visible again; none while the queue is empty. */
  private void lookAtVisibility(Head head) {
    cancelVisibilityTimer();
    if (head.visibleAtMs() > 0 && !result.future().isComplete()) {
      long delay = Math.max(MIN_LOOK_DELAY_MS, head.visibleAtMs() - clock.millis() + MIN_LOOK_DELAY_MS);
      visibilityTimer = vertx.setTimer(delay, id -> {
        visibilityTimer = -1;
        lookNow();
      });
    }
  }

  private void cancelVisibilityTimer() {
    if (visibilityTimer >= 0) {
      vertx.cancelTimer(visibilityTimer);
      visibilityTimer = -1;
    }
  }
}
