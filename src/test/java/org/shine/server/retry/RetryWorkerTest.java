package org.shine.server.retry;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.bus.Addresses;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.db.StorageHealth;
import org.shine.server.delivery.AttemptRequest;
import org.shine.server.delivery.DeliveryTestbed;
import org.shine.server.dm.KeyFile;
import org.shine.server.model.DeliveryState;
import org.shine.server.support.Eventually;
import org.shine.server.support.Opened;

/**
 * The retry timer's worker over a real database, with the node's engine played on {@code delivery.attempt}: the
 * stand-in records each attempt handed over and answers only when the test says, so a tick stays running.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class RetryWorkerTest {
  private static final long WAIT_MS = 20_000;
  private final Opened opened = new Opened();
  private final List<Message<AttemptRequest>> handedOver = new CopyOnWriteArrayList<>();
  private DeliveryTestbed bed;
  private KeyFile alice;
  private RetryWorker worker;
  private StorageHealth health;
  private Context context;

  @BeforeEach
  void setUp(Vertx vertx) {
    bed = new DeliveryTestbed(vertx, opened, "{}");
    alice = bed.user("alice", "s1");
    bed.user("bob", "s3");
    vertx.eventBus().<AttemptRequest>localConsumer(Addresses.DELIVERY_ATTEMPT, handedOver::add).completion().await();
    health = StorageHealth.open(vertx, bed.database().config());
    opened.onClose(() -> health.close().await());
    worker = new RetryWorker(bed.config(), bed.services().deliveries(), bed.services().engine(), bed.clock(),
        health);
    context = vertx.getOrCreateContext();
  }

  @AfterEach
  void close() {
    answerAll();
    opened.closeAll();
  }

  /** The worker is confined to one event loop: every call to it runs there. */
  private <T> Future<T> onLoop(Supplier<Future<T>> call) {
    return Future.future(promise -> context.runOnContext(v -> call.get().onComplete(promise)));
  }

  /** An accepted pair of alice's with one attempt made, the next due {@code dueInMs} from now. */
  private SignedPair stored(long dueInMs) {
    SignedPair pair = bed.pair("alice", alice, "bob");
    bed.storeAccepted(pair, 1, bed.clock().millis() + dueInMs);
    return pair;
  }

  /** The engine's answer to every attempt handed over so far: delivered, and its place given back. */
  private void answerAll() {
    for (Message<AttemptRequest> attempt : List.copyOf(handedOver)) {
      handedOver.remove(attempt);
      bed.slots().release();
      attempt.reply(DeliveryState.DELIVERED);
    }
  }

  private List<String> handedOverKeys() {
    return handedOver.stream().map(m -> m.body().task().baseKey()).sorted().toList();
  }

  @Test
  @DisplayName("a tick claims the due rows and hands each its next scheduled attempt; a row not yet due stays")
  void claimsDueRows() {
    SignedPair first = stored(-1);
    SignedPair second = stored(0);
    stored(60_000);

    Future<Integer> tick = onLoop(worker::tick);

    Eventually.until("two attempts handed over", WAIT_MS, () -> handedOver.size() == 2);
    assertThat(handedOverKeys()).containsExactlyElementsOf(
        List.of(first.outgoing().baseKey(), second.outgoing().baseKey()).stream().sorted().toList());
    assertThat(handedOver).allSatisfy(m -> {
      assertThat(m.body().task().attempt()).as("the attempt after the one made").isEqualTo(2);
      assertThat(m.body().notifySender()).as("the sender learns the outcome by push").isTrue();
      assertThat(m.body().sender()).as("the engine reads the users").isNull();
    });
    assertThat(tick.isComplete()).as("the tick runs until the engine answers").isFalse();
    assertThat(bed.slots().free()).isEqualTo(bed.slots().capacity() - 2);

    answerAll();

    assertThat(tick.await()).isEqualTo(2);
    assertThat(handedOver).isEmpty();
  }

  @Test
  @DisplayName("a tick that finds the previous one still running skips: the row due meanwhile waits for the next")
  void overlappingTickSkips() {
    stored(-1);
    Future<Integer> running = onLoop(worker::tick);
    Eventually.until("the first tick hands over its row", WAIT_MS, () -> handedOver.size() == 1);
    SignedPair dueMeanwhile = stored(0);

    Integer skipped = onLoop(worker::tick).await();

    assertThat(skipped).isZero();
    assertThat(handedOver).hasSize(1);
    answerAll();
    assertThat(running.await()).isEqualTo(1);

    // the skipped tick left the row unclaimed: the next tick takes it
    Future<Integer> next = onLoop(worker::tick);
    Eventually.until("the next tick hands over the row", WAIT_MS, () -> handedOver.size() == 1);
    assertThat(handedOverKeys()).containsExactly(dueMeanwhile.outgoing().baseKey());
    answerAll();
    assertThat(next.await()).isEqualTo(1);
  }

  /** A worker over the same rows and engine whose claims take at most {@code maxInFlight} rows. */
  private RetryWorker narrowWorker(int maxInFlight) {
    return new RetryWorker(DeliveryTestbed.config("{\"maxInFlight\":" + maxInFlight + "}"),
        bed.services().deliveries(), bed.services().engine(), bed.clock(), health);
  }

  @Test
  @DisplayName("a claim that filled its places is followed by another once its attempts are over: one tick drains"
      + " a backlog of five in rounds of two, two and one")
  void fullClaimClaimsAgain() {
    RetryWorker narrow = narrowWorker(2);
    for (int i = 0; i < 5; i++) {
      stored(-1);
    }

    Future<Integer> tick = onLoop(narrow::tick);

    for (int expected : new int[] {2, 2, 1}) {
      Eventually.until("a round of " + expected + " handed over", WAIT_MS, () -> handedOver.size() == expected);
      assertThat(tick.isComplete()).as("the tick waits for its round's attempts").isFalse();
      assertThat(handedOver).as("a round claims no more than its places").hasSize(expected);
      answerAll();
    }
    assertThat(tick.await()).isEqualTo(5);
    assertThat(handedOver).as("a claim of fewer rows than its places ends the tick").isEmpty();
  }

  @Test
  @DisplayName("stop lets the running round finish and starts no other: the rest waits for a later tick")
  void stopEndsTheRounds() {
    RetryWorker narrow = narrowWorker(2);
    for (int i = 0; i < 5; i++) {
      stored(-1);
    }
    Future<Integer> tick = onLoop(narrow::tick);
    Eventually.until("the first round handed over", WAIT_MS, () -> handedOver.size() == 2);

    Future<Void> stopped = onLoop(narrow::stop);
    assertThat(stopped.isComplete()).as("stop waits for the round's attempts").isFalse();
    answerAll();

    stopped.await();
    assertThat(tick.await()).isEqualTo(2);
    assertThat(handedOver).isEmpty();
    assertThat(onLoop(narrow::tick).await()).as("a stopped worker ticks no more").isZero();
    assertThat(handedOver).isEmpty();
  }

  @Test
  @DisplayName("a tick ends after MAX_ROUNDS_PER_TICK full rounds; what is still due waits for the next tick")
  void roundsPerTickAreBounded() {
    RetryWorker narrow = narrowWorker(1);
    int rows = RetryWorker.MAX_ROUNDS_PER_TICK + 2;
    for (int i = 0; i < rows; i++) {
      stored(-1);
    }

    Future<Integer> tick = onLoop(narrow::tick);
    for (int round = 1; round <= RetryWorker.MAX_ROUNDS_PER_TICK; round++) {
      Eventually.until("round " + round + " handed over", WAIT_MS, () -> handedOver.size() == 1);
      answerAll();
    }
    assertThat(tick.await()).isEqualTo(RetryWorker.MAX_ROUNDS_PER_TICK);
    assertThat(handedOver).as("no round after the last one the tick may run").isEmpty();

    Future<Integer> next = onLoop(narrow::tick);
    for (int round = 1; round <= 2; round++) {
      Eventually.until("the next tick's round handed over", WAIT_MS, () -> handedOver.size() == 1);
      answerAll();
    }
    assertThat(next.await()).as("the rows left over, then a claim of none").isEqualTo(2);
  }
}
