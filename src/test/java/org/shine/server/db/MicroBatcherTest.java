package org.shine.server.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.bus.Failures;
import org.shine.server.protocol.ErrorCode;

/**
 * MicroBatcher is confined to one event loop, so every call here runs on one context. A test is a list of steps,
 * each run as its own task on that context: whatever a step triggers asynchronously has run before the next one.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 10, timeUnit = TimeUnit.SECONDS)
class MicroBatcherTest {
  private Context context;
  private Batches batches;

  @BeforeEach
  void setUp(Vertx vertx) {
    context = vertx.getOrCreateContext();
    batches = new Batches();
  }

  /** One call of the batch function, answered by the test. */
  private final class Call {
    final List<String> items;
    final Promise<List<String>> promise = Promise.promise();

    Call(List<String> items) {
      this.items = List.copyOf(items);
    }

    /** Answers one output per input, in order: the item upper-cased. */
    void succeed() {
      answer(Future.succeededFuture(items.stream().map(String::toUpperCase).toList()));
    }

    void fail(Throwable cause) {
      answer(Future.failedFuture(cause));
    }

    void answer(Future<List<String>> outcome) {
      assertThat(promise.future().isComplete()).as("call %s answered twice", items).isFalse();
      batches.running--;
      promise.handle(outcome);
    }
  }

  /**
   * The batch function under the test's control: it records every call and how many run at once. Items starting
   * with "auto" are answered at once by {@link #auto}; any other call waits until the test answers it.
   */
  private final class Batches implements Function<List<String>, Future<List<String>>> {
    final List<Call> calls = new ArrayList<>();
    Function<List<String>, Future<List<String>>> auto = items -> null;
    int running;
    int maxRunning;
    int offContextCalls;

    @Override
    public Future<List<String>> apply(List<String> items) {
      // an assertion failing here could be swallowed by a future listener, so count and check at the end
      if (Vertx.currentContext() != context) {
        offContextCalls++;
      }
      Call call = new Call(items);
      calls.add(call);
      running++;
      maxRunning = Math.max(maxRunning, running);
      Future<List<String>> automatic = auto.apply(call.items);
      if (automatic != null) {
        call.answer(automatic);
      }
      return call.promise.future();
    }

    Call last() {
      return calls.get(calls.size() - 1);
    }

    List<List<String>> batchItems() {
      return calls.stream().map(c -> c.items).toList();
    }

    List<Integer> sizes() {
      return calls.stream().map(c -> c.items.size()).toList();
    }

    void answerAllPending() {
      for (Call call : List.copyOf(calls)) {
        if (!call.promise.future().isComplete()) {
          call.succeed();
        }
      }
    }
  }

  /** A batcher whose every free slot starts a batch at once (extraBatchAt 1). */
  private MicroBatcher<String, String> batcher(int maxBatchSize, int maxConcurrentBatches, int queueCapacity) {
    return new MicroBatcher<>(batches, item -> item, maxBatchSize, maxConcurrentBatches, queueCapacity, 1);
  }

  /** Runs each step as a separate task on the test's context, in order, then completes the test. */
  private void steps(VertxTestContext test, Runnable... steps) {
    next(test, Arrays.asList(steps).iterator());
  }

  private void next(VertxTestContext test, Iterator<Runnable> steps) {
    context.runOnContext(v -> {
      if (!steps.hasNext()) {
        test.verify(() -> assertThat(batches.offContextCalls).as("batch calls off the batcher's context").isZero());
        if (!test.failed()) {
          test.completeNow();
        }
        return;
      }
      try {
        steps.next().run();
      } catch (Throwable t) {
        test.failNow(t);
        return;
      }
      next(test, steps);
    });
  }

  @Test
  @DisplayName("an item runs at once on an idle batcher, and items submitted while a batch runs form the next batch")
  void concurrentSubmitsAreGroupedIntoTheNextBatch(VertxTestContext test) {
    MicroBatcher<String, String> batcher = batcher(16, 1, 100);
    List<Future<String>> futures = new ArrayList<>();

    steps(test,
        () -> {
          futures.add(batcher.submit("a"));
          // GIVEN a running batch (no delay: it started inside submit)
          assertThat(batches.batchItems()).containsExactly(List.of("a"));
          // WHEN three more arrive while it runs
          futures.add(batcher.submit("b"));
          futures.add(batcher.submit("c"));
          futures.add(batcher.submit("d"));
          assertThat(batches.calls).hasSize(1);
          assertThat(batcher.queued()).isEqualTo(3);
        },
        () -> {
          assertThat(futures).noneMatch(Future::isComplete);
          batches.calls.get(0).succeed();
        },
        () -> {
          // THEN they leave together as soon as the running batch completes
          assertThat(futures.get(0).result()).isEqualTo("A");
          assertThat(batches.batchItems()).containsExactly(List.of("a"), List.of("b", "c", "d"));
          assertThat(batcher.queued()).isZero();
          assertThat(futures.subList(1, 4)).noneMatch(Future::isComplete);
          batches.calls.get(1).succeed();
        },
        () -> {
          assertThat(futures).extracting(Future::result).containsExactly("A", "B", "C", "D");
          assertThat(batches.sizes()).containsExactly(1, 3);
          futures.add(batcher.submit("e"));
          assertThat(batches.batchItems()).last().isEqualTo(List.of("e"));
        });
  }

  @Test
  @DisplayName("with extraBatchAt, a second batch starts beside a running one only once that many items wait;"
      + " fewer leave together when the running batch ends")
  void extraBatchesOnlyForAQueue(VertxTestContext test) {
    MicroBatcher<String, String> batcher =
        new MicroBatcher<>(batches, item -> item, 16, 4, 100, 3);
    List<Future<String>> futures = new ArrayList<>();

    steps(test,
        () -> {
          futures.add(batcher.submit("a"));
          // GIVEN a running batch WHEN two more arrive THEN they wait, though three slots are free
          futures.add(batcher.submit("b"));
          futures.add(batcher.submit("c"));
          assertThat(batches.batchItems()).containsExactly(List.of("a"));
          assertThat(batcher.queued()).isEqualTo(2);
          // WHEN a third arrives THEN the three leave as a second batch beside the first
          futures.add(batcher.submit("d"));
          assertThat(batches.batchItems()).containsExactly(List.of("a"), List.of("b", "c", "d"));
          assertThat(batcher.queued()).isZero();
          futures.add(batcher.submit("e"));
          assertThat(batcher.queued()).isEqualTo(1);
        },
        () -> batches.calls.get(0).succeed(),
        () -> {
          // a slot freed with one batch still running: one waiting item is below the threshold and waits
          assertThat(batches.calls).hasSize(2);
          batches.calls.get(1).succeed();
        },
        () -> {
          // nothing runs: the waiting item leaves at once
          assertThat(batches.batchItems()).last().isEqualTo(List.of("e"));
          batches.answerAllPending();
        },
        () -> {
          assertThat(futures).extracting(Future::result).containsExactly("A", "B", "C", "D", "E");
          assertThat(batches.maxRunning).isEqualTo(2);
        });
  }

  @Test
  @DisplayName("a batch never holds more than maxBatchSize items; the rest wait for the following batches")
  void batchSizeIsCapped(VertxTestContext test) {
    MicroBatcher<String, String> batcher = batcher(2, 1, 100);
    List<Future<String>> futures = new ArrayList<>();

    steps(test,
        () -> {
          for (String item : List.of("a", "b", "c", "d", "e", "f")) {
            futures.add(batcher.submit(item));
          }
          assertThat(batcher.queued()).isEqualTo(5);
        },
        batches::answerAllPending,
        batches::answerAllPending,
        batches::answerAllPending,
        () -> {
          assertThat(batches.batchItems()).containsExactly(List.of("a"), List.of("b", "c"), List.of("d", "e"),
              List.of("f"));
          assertThat(futures).noneMatch(Future::failed);
          assertThat(futures.subList(0, 5)).extracting(Future::result).containsExactly("A", "B", "C", "D", "E");
          assertThat(futures.get(5).isComplete()).isFalse();
          batches.answerAllPending();
        },
        () -> assertThat(futures.get(5).result()).isEqualTo("F"));
  }

  @Test
  @DisplayName("items with equal keys never share a batch; the later one waits for a following batch")
  void equalKeysNeverShareABatch(VertxTestContext test) {
    MicroBatcher<String, String> batcher =
        new MicroBatcher<>(batches, item -> item.substring(0, 1), 16, 1, 100);
    List<Future<String>> futures = new ArrayList<>();

    steps(test,
        () -> {
          for (String item : List.of("x0", "k1", "k2", "j1", "k3", "m1", "j2")) {
            futures.add(batcher.submit(item));
          }
        },
        batches::answerAllPending,
        batches::answerAllPending,
        batches::answerAllPending,
        batches::answerAllPending,
        () -> {
          assertThat(batches.batchItems()).containsExactly(
              List.of("x0"),
              List.of("k1", "j1", "m1"),
              List.of("k2", "j2"),
              List.of("k3"));
          assertThat(futures).extracting(Future::result)
              .containsExactly("X0", "K1", "K2", "J1", "K3", "M1", "J2");
        });
  }

  @Test
  @DisplayName("at most maxConcurrentBatches run at once: free slots start batches immediately, the rest group up")
  void concurrencyIsBounded(VertxTestContext test) {
    MicroBatcher<String, String> batcher = batcher(16, 2, 100);
    List<Future<String>> futures = new ArrayList<>();

    steps(test,
        () -> {
          futures.add(batcher.submit("a"));
          futures.add(batcher.submit("b"));
          futures.add(batcher.submit("c"));
          futures.add(batcher.submit("d"));
          // two free slots: a and b each started a batch at once; c and d wait together
          assertThat(batches.batchItems()).containsExactly(List.of("a"), List.of("b"));
          assertThat(batches.running).isEqualTo(2);
          assertThat(batcher.queued()).isEqualTo(2);
        },
        () -> batches.calls.get(1).succeed(),
        () -> {
          assertThat(batches.batchItems()).containsExactly(List.of("a"), List.of("b"), List.of("c", "d"));
          assertThat(batches.running).isEqualTo(2);
          futures.add(batcher.submit("e"));
          assertThat(batches.calls).hasSize(3);
        },
        () -> batches.calls.get(0).succeed(),
        () -> {
          assertThat(batches.batchItems()).last().isEqualTo(List.of("e"));
          batches.answerAllPending();
        },
        () -> {
          assertThat(batches.maxRunning).isEqualTo(2);
          assertThat(futures).extracting(Future::result).containsExactly("A", "B", "C", "D", "E");
        });
  }

  @Test
  @DisplayName("under a sustained load, concurrency, batch size and key uniqueness all hold and every item completes once")
  void sustainedLoad(VertxTestContext test) {
    // every call is answered on a later task of the same event loop, as a database client would
    MicroBatcher<String, String> batcher = new MicroBatcher<>(batches, item -> item.split("-")[0], 8, 3, 1000,
        1);
    List<String> items = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      items.add("k" + (i % 11) + "-" + i);
    }
    List<Future<String>> futures = new ArrayList<>();

    context.runOnContext(v -> {
      Runnable[] answerer = new Runnable[1];
      answerer[0] = () -> {
        batches.answerAllPending();
        if (futures.stream().anyMatch(f -> !f.isComplete())) {
          context.runOnContext(x -> answerer[0].run());
        }
      };
      for (String item : items) {
        futures.add(batcher.submit(item));
      }
      context.runOnContext(x -> answerer[0].run());
      Future.all(futures).onComplete(test.succeeding(done -> test.verify(() -> {
        assertThat(batches.maxRunning).isEqualTo(3);
        List<String> seen = new ArrayList<>();
        for (List<String> batch : batches.batchItems()) {
          assertThat(batch).hasSizeBetween(1, 8);
          Set<String> keys = new HashSet<>();
          for (String item : batch) {
            assertThat(keys.add(item.split("-")[0])).as("duplicate key in batch %s", batch).isTrue();
          }
          seen.addAll(batch);
        }
        assertThat(seen).containsExactlyInAnyOrderElementsOf(items);
        for (int i = 0; i < items.size(); i++) {
          assertThat(futures.get(i).result()).isEqualTo(items.get(i).toUpperCase());
        }
        assertThat(batches.offContextCalls).isZero();
        // grouping actually happened, up to the size cap
        assertThat(batches.sizes()).contains(8);
        assertThat(batches.calls.size()).isLessThan(items.size());
        test.completeNow();
      })));
    });
  }

  @Test
  @DisplayName("a failing batch of several items is retried item by item, so only the bad item fails")
  void failingBatchIsRetriedItemByItem(VertxTestContext test) {
    MicroBatcher<String, String> batcher = batcher(16, 1, 100);
    RuntimeException badItem = new IllegalStateException("unique violation caused by bad");
    List<Future<String>> futures = new ArrayList<>();
    Future<?>[] late = new Future<?>[1];

    steps(test,
        () -> {
          futures.add(batcher.submit("first"));
          futures.add(batcher.submit("a"));
          futures.add(batcher.submit("bad"));
          futures.add(batcher.submit("c"));
        },
        () -> batches.calls.get(0).succeed(),
        () -> {
          assertThat(batches.calls.get(1).items).containsExactly("a", "bad", "c");
          batches.calls.get(1).fail(badItem);
        },
        () -> {
          // the retry runs one item at a time and keeps the batch slot: a new item must wait
          assertThat(batches.batchItems()).last().isEqualTo(List.of("a"));
          late[0] = batcher.submit("late");
          assertThat(batches.calls).hasSize(3);
          assertThat(futures.subList(1, 4)).noneMatch(Future::isComplete);
          batches.last().succeed();
        },
        () -> {
          assertThat(futures.get(1).result()).isEqualTo("A");
          assertThat(batches.batchItems()).last().isEqualTo(List.of("bad"));
          batches.last().fail(badItem);
        },
        () -> {
          assertThat(futures.get(2).failed()).isTrue();
          assertThat(futures.get(2).cause()).isSameAs(badItem);
          assertThat(batches.batchItems()).last().isEqualTo(List.of("c"));
          batches.last().succeed();
        },
        () -> {
          assertThat(futures.get(3).result()).isEqualTo("C");
          assertThat(batches.batchItems()).containsExactly(List.of("first"), List.of("a", "bad", "c"), List.of("a"),
              List.of("bad"), List.of("c"), List.of("late"));
          batches.last().succeed();
        },
        () -> assertThat(late[0].result()).isEqualTo("LATE"));
  }

  @Test
  @DisplayName("a batch function that throws, or answers the wrong number of outputs, fails only the offending item")
  void throwingOrMiscountingBatchFunction(VertxTestContext test) {
    batches.auto = items -> {
      if (items.contains("hold")) {
        return null;
      }
      if (items.contains("throws")) {
        throw new IllegalArgumentException("cannot store throws");
      }
      if (items.contains("short")) {
        return Future.succeededFuture(List.of());
      }
      return Future.succeededFuture(items.stream().map(String::toUpperCase).toList());
    };
    MicroBatcher<String, String> batcher = batcher(16, 1, 100);
    List<Future<String>> futures = new ArrayList<>();

    steps(test,
        () -> {
          futures.add(batcher.submit("hold"));
          futures.add(batcher.submit("a"));
          futures.add(batcher.submit("throws"));
          futures.add(batcher.submit("b"));
          futures.add(batcher.submit("short"));
          futures.add(batcher.submit("c"));
        },
        () -> batches.calls.get(0).succeed(),
        () -> {
          assertThat(batches.calls.get(1).items).containsExactly("a", "throws", "b", "short", "c");
          assertThat(futures.get(0).result()).isEqualTo("HOLD");
          assertThat(futures.get(1).result()).isEqualTo("A");
          assertThat(futures.get(2).cause()).isInstanceOf(IllegalArgumentException.class)
              .hasMessage("cannot store throws");
          assertThat(futures.get(3).result()).isEqualTo("B");
          assertThat(futures.get(4).cause()).isInstanceOf(IllegalStateException.class);
          assertThat(futures.get(5).result()).isEqualTo("C");
          assertThat(batches.sizes()).containsExactly(1, 5, 1, 1, 1, 1, 1);
        });
  }

  @Test
  @DisplayName("a single-item batch that fails is not retried")
  void singleItemFailureIsNotRetried(VertxTestContext test) {
    MicroBatcher<String, String> batcher = batcher(16, 1, 100);
    RuntimeException cause = new RuntimeException("storage down");
    List<Future<String>> futures = new ArrayList<>();

    steps(test,
        () -> futures.add(batcher.submit("only")),
        () -> batches.last().fail(cause),
        () -> {
          assertThat(futures.get(0).cause()).isSameAs(cause);
          assertThat(batches.calls).hasSize(1);
          assertThat(batches.running).isZero();
          futures.add(batcher.submit("next"));
          assertThat(batches.calls).hasSize(2);
        });
  }

  @Test
  @DisplayName("a submit beyond the queue capacity fails at once with 429 OVERLOADED and is never run")
  void queueOverCapacityFailsAtOnce(VertxTestContext test) {
    MicroBatcher<String, String> batcher = batcher(16, 1, 2);
    List<Future<String>> futures = new ArrayList<>();

    steps(test,
        () -> {
          futures.add(batcher.submit("running"));
          futures.add(batcher.submit("q1"));
          futures.add(batcher.submit("q2"));
          assertThat(batcher.queued()).isEqualTo(2);

          Future<String> rejected = batcher.submit("q3");

          assertThat(rejected.failed()).as("failed synchronously, without waiting for a batch").isTrue();
          assertThat(rejected.cause()).isInstanceOf(StorageBusyException.class);
          // mapped at the edge to 429 OVERLOADED
          assertThat(Failures.classify(rejected.cause())).satisfies(e -> {
            assertThat(e.status()).isEqualTo(429);
            assertThat(e.code()).isEqualTo(ErrorCode.OVERLOADED);
          });
          assertThat(batcher.queued()).isEqualTo(2);
        },
        () -> batches.last().succeed(),
        () -> {
          assertThat(batcher.queued()).isZero();
          // room again: the next submit is accepted and queued behind the running batch
          futures.add(batcher.submit("q4"));
          assertThat(batcher.queued()).isEqualTo(1);
          batches.last().succeed();
        },
        batches::answerAllPending,
        () -> {
          assertThat(batches.batchItems()).containsExactly(List.of("running"), List.of("q1", "q2"), List.of("q4"));
          assertThat(futures).extracting(Future::result).containsExactly("RUNNING", "Q1", "Q2", "Q4");
        });
  }

  @Test
  @DisplayName("each caller gets the output at its own position in its batch")
  void eachCallerGetsItsOwnOutput(VertxTestContext test) {
    MicroBatcher<String, String> batcher = batcher(4, 1, 100);
    List<String> items = List.of("p", "q", "r", "s", "t", "u", "v", "w", "x");
    List<Future<String>> futures = new ArrayList<>();

    steps(test,
        () -> items.forEach(item -> futures.add(batcher.submit(item))),
        () -> batches.last().answer(Future.succeededFuture(List.of("out:p"))),
        () -> {
          Call second = batches.last();
          assertThat(second.items).containsExactly("q", "r", "s", "t");
          second.answer(Future.succeededFuture(second.items.stream().map(i -> "out:" + i).toList()));
        },
        () -> {
          Call third = batches.last();
          assertThat(third.items).containsExactly("u", "v", "w", "x");
          third.answer(Future.succeededFuture(third.items.stream().map(i -> "out:" + i).toList()));
        },
        () -> {
          for (int i = 0; i < items.size(); i++) {
            assertThat(futures.get(i).result()).as("caller of %s", items.get(i)).isEqualTo("out:" + items.get(i));
          }
        });
  }
}
