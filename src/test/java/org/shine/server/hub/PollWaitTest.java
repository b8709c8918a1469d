package org.shine.server.hub;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.db.HubRepository.Head;
import org.shine.server.db.HubRepository.QueuedEvent;

/**
 * A waiting long poll looks at its user's queue only when something can have changed — the start of the wait, a
 * wake-up, the visibility time of a head in flight — so that idle polls cost the database nothing (issue 18).
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class PollWaitTest {
  private static final String WAKE = "test.poll-wait.wake";
  private static final QueuedEvent EVENT = new QueuedEvent(7, "{}");
  private final Clock clock = Clock.systemUTC();

  /** Answers its heads in turn (the last one again when they run out), counting the looks. */
  private static final class Looks implements Supplier<Future<Head>> {
    final AtomicInteger count = new AtomicInteger();
    private final Deque<Supplier<Future<Head>>> answers = new ArrayDeque<>();

    Looks then(Head head) {
      answers.add(() -> Future.succeededFuture(head));
      return this;
    }

    Looks then(Supplier<Future<Head>> answer) {
      answers.add(answer);
      return this;
    }

    @Override
    public Future<Head> get() {
      count.incrementAndGet();
      return (answers.size() > 1 ? answers.poll() : answers.peek()).get();
    }
  }

  @Test
  @DisplayName("an idle poll on an empty queue looks once, then not again until its wait ends empty")
  void idlePollLooksOnce(Vertx vertx, VertxTestContext test) {
    Looks looks = new Looks().then(Head.EMPTY);
    long start = System.nanoTime();
    onContext(vertx, () -> new PollWait(vertx, clock, looks, event -> { })
        .await(vertx.eventBus().consumer(WAKE), 1_200))
        .onComplete(test.succeeding(event -> test.verify(() -> {
          assertThat(event).isNull();
          assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(1_200);
          assertThat(looks.count).as("looks at the queue in 1.2 s of waiting").hasValue(1);
          test.completeNow();
        })));
  }

  @Test
  @DisplayName("a poll behind a head in flight looks again when that head becomes visible, and takes it")
  void looksAtVisibilityTime(Vertx vertx, VertxTestContext test) {
    Looks looks = new Looks().then(Head.inFlightUntil(clock.millis() + 300)).then(Head.taken(EVENT));
    long start = System.nanoTime();
    onContext(vertx, () -> new PollWait(vertx, clock, looks, event -> { })
        .await(vertx.eventBus().consumer(WAKE), 5_000))
        .onComplete(test.succeeding(event -> test.verify(() -> {
          assertThat(event).isEqualTo(EVENT);
          assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(250L, 2_000L);
          assertThat(looks.count).hasValue(2);
          test.completeNow();
        })));
  }

  @Test
  @DisplayName("a wake-up (an event queued, acked or given back, on any node) makes the poll look again")
  void wakeUpLooksAgain(Vertx vertx, VertxTestContext test) {
    Looks looks = new Looks().then(Head.EMPTY).then(Head.taken(EVENT));
    onContext(vertx, () -> {
      Future<QueuedEvent> waiting = new PollWait(vertx, clock, looks, event -> { })
          .await(vertx.eventBus().consumer(WAKE), 5_000);
      vertx.setTimer(200, id -> vertx.eventBus().publish(WAKE, "queued"));
      return waiting;
    }).onComplete(test.succeeding(event -> test.verify(() -> {
      assertThat(event).isEqualTo(EVENT);
      assertThat(looks.count).hasValue(2);
      test.completeNow();
    })));
  }

  @Test
  @DisplayName("an event taken by a look that ends after the wait is given back, not hidden unseen")
  void lateEventIsGivenBack(Vertx vertx, VertxTestContext test) {
    Promise<Head> late = Promise.promise();
    List<QueuedEvent> givenBack = new ArrayList<>();
    Looks looks = new Looks().then(Head.EMPTY).then(late::future);
    onContext(vertx, () -> {
      Future<QueuedEvent> waiting = new PollWait(vertx, clock, looks, givenBack::add)
          .await(vertx.eventBus().consumer(WAKE), 300);
      vertx.setTimer(100, id -> vertx.eventBus().publish(WAKE, "queued"));
      return waiting;
    }).onComplete(test.succeeding(event -> {
      late.complete(Head.taken(EVENT));
      test.verify(() -> {
        assertThat(event).isNull();
        assertThat(givenBack).containsExactly(EVENT);
        test.completeNow();
      });
    }));
  }

  /** Runs {@code start} on an event loop of its own, as a poll runs on its gateway instance's. */
  private static <T> Future<T> onContext(Vertx vertx, Supplier<Future<T>> start) {
    Context context = vertx.getOrCreateContext();
    Promise<T> done = Promise.promise();
    context.runOnContext(v -> start.get().onComplete(done));
    return done.future();
  }
}
