package org.shine.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shine.server.delivery.DeliveryTestbed.url;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.delivery.DeliveryTestbed.Peers.Behaviour;
import org.shine.server.dm.KeyFile;
import org.shine.server.model.DeliveryState;
import org.shine.server.protocol.Ops;
import org.shine.server.support.Eventually;
import org.shine.server.support.Opened;

/**
 * The node's one {@link DeliveryEngine}, deployed as on a node ({@link DeliveryEngineVerticle}) over a real database,
 * with the recipient's servers played on the bus: alice (on s1, this node) writes to bob (on s3 and s4).
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class DeliveryEngineTest {
  private static final long WAIT_MS = 20_000;
  private static final String S3 = url("s3");
  private static final String S4 = url("s4");
  private final Opened opened = new Opened();
  private DeliveryTestbed bed;
  private KeyFile alice;

  @AfterEach
  void close() {
    if (bed != null) {
      // answer from now on, then release what is held: an attempt that was waiting for a place (freed by the
      // release) must not be held in turn while the test closes; then let every attempt record its outcome, so that
      // the pool does not close under an attempt that is opening a connection
      bobsServers(Behaviour.ACK);
      bed.peers().release(S3);
      bed.peers().release(S4);
      bed.awaitIdle();
    }
    opened.closeAll();
  }

  private void start(Vertx vertx, String delivery) {
    bed = new DeliveryTestbed(vertx, opened, delivery);
    alice = bed.user("alice", "s1");
    bed.user("bob", "s3", "s4");
    vertx.deployVerticle(new DeliveryEngineVerticle(bed.services())).await();
  }

  private SignedPair accepted(String from, KeyFile key, String to) {
    SignedPair pair = bed.pair(from, key, to);
    bed.storeAccepted(pair, 0, pair.outgoing().createdAtMs());
    return pair;
  }

  private void bobsServers(Behaviour behaviour) {
    bed.peers().set(S3, behaviour);
    bed.peers().set(S4, behaviour);
  }

  /** The first attempt of a new accepted pair from alice to {@code to}. */
  private Future<DeliveryState> attemptTo(String to) {
    return attempt(DeliveryTestbed.firstAttempt(accepted("alice", alice, to)));
  }

  /** An attempt to bob whose calls both of bob's servers hold, once it has called s3. */
  private Future<DeliveryState> attemptHeldByBobsServers() {
    bobsServers(Behaviour.HOLD);
    Future<DeliveryState> held = attemptTo("bob");
    Eventually.until("the attempt holds s3", WAIT_MS, () -> bed.peers().calls(S3, Ops.RECEIVE_INCOMING_MESSAGE) == 1);
    return held;
  }

  private Future<DeliveryState> attempt(DeliveryTask task) {
    assertThat(bed.services().engine().reserve()).as("a free attempt place").isTrue();
    return bed.services().engine().submitReserved(new AttemptRequest(task, false, null));
  }

  @Test
  @DisplayName("both routes are called at once: the first ACK delivers while the other route still holds its call")
  void firstAckDelivers(Vertx vertx) {
    start(vertx, "{\"callTimeoutMs\":60000}");
    bed.peers().set(S3, Behaviour.HOLD);
    SignedPair pair = accepted("alice", alice, "bob");

    DeliveryState state = attempt(DeliveryTestbed.firstAttempt(pair)).await();

    assertThat(state).isEqualTo(DeliveryState.DELIVERED);
    assertThat(bed.peers().calls(S3, Ops.RECEIVE_INCOMING_MESSAGE)).as("s3 was called, and still holds").isEqualTo(1);
    assertThat(bed.peers().calls(S4, Ops.RECEIVE_INCOMING_MESSAGE)).isEqualTo(1);
    assertThat(bed.row(pair).state()).isEqualTo("delivered");
    assertThat(bed.slots().free()).as("the attempt gave its place back").isEqualTo(bed.slots().capacity());
  }

  @Test
  @DisplayName("when both routes fail the message is not delivered: the row waits for the 30 s attempt")
  void bothFail(Vertx vertx) {
    start(vertx, "{}");
    bobsServers(Behaviour.REFUSE);
    SignedPair pair = accepted("alice", alice, "bob");

    DeliveryState state = attempt(DeliveryTestbed.firstAttempt(pair)).await();

    assertThat(state).isEqualTo(DeliveryState.ACCEPTED);
    assertThat(bed.peers().calls(S3, Ops.RECEIVE_INCOMING_MESSAGE)).isEqualTo(1);
    assertThat(bed.peers().calls(S4, Ops.RECEIVE_INCOMING_MESSAGE)).isEqualTo(1);
    assertThat(bed.row(pair)).isEqualTo(new DeliveryTestbed.Row("accepted", 1,
        pair.outgoing().createdAtMs() + 30_000));
  }

  @Test
  @DisplayName("the last scheduled attempt without an ACK fails the message")
  void lastAttemptFails(Vertx vertx) {
    start(vertx, "{}");
    bobsServers(Behaviour.REFUSE);
    SignedPair pair = bed.pair("alice", alice, "bob");
    long acceptedAt = pair.outgoing().createdAtMs();
    bed.storeAccepted(pair, 4, acceptedAt + 3_600_000);
    DeliveryTask last = DeliveryTask.scheduled(pair.outgoing().baseKey(), 0, "alice", "bob", pair.incoming().bytes(),
        acceptedAt, 5, 0);

    assertThat(attempt(last).await()).isEqualTo(DeliveryState.FAILED);
    assertThat(bed.row(pair)).isEqualTo(new DeliveryTestbed.Row("failed", 5, null));
  }

  @Test
  @DisplayName("a destination at its limit makes the next attempt towards it wait, while an attempt to another"
      + " server runs; the waiting one runs once the destination's place is free")
  void perDestinationBudget(Vertx vertx) {
    start(vertx, "{\"callTimeoutMs\":60000,\"maxInFlightPerDestination\":1}");
    bed.user("carol", "s5");
    Future<DeliveryState> first = attemptHeldByBobsServers();
    Future<DeliveryState> second = attemptTo("bob");

    // an attempt to another server runs beside the waiting one, and completes after it was handed over
    DeliveryState toCarol = attemptTo("carol").await();

    assertThat(toCarol).isEqualTo(DeliveryState.DELIVERED);
    assertThat(second.isComplete()).as("the second attempt to bob waits for the places of bob's servers").isFalse();
    assertThat(bed.peers().calls(S3, Ops.RECEIVE_INCOMING_MESSAGE)).isEqualTo(1);

    // an attempt that calls two servers runs once both have room (docs/protocol.md, peer budget): both answer now,
    // rather than s4's call holding its place until the call timeout
    bobsServers(Behaviour.ACK);
    bed.peers().release(S3);
    bed.peers().release(S4);
    assertThat(first.await()).isEqualTo(DeliveryState.DELIVERED);
    assertThat(second.await()).as("the waiting attempt ran once s3 was free").isEqualTo(DeliveryState.DELIVERED);
    assertThat(bed.peers().calls(S3, Ops.RECEIVE_INCOMING_MESSAGE)).isEqualTo(2);
  }

  @Test
  @DisplayName("an attempt whose sender's line is full is not made: it answers accepted without calling anyone")
  void senderLineFull(Vertx vertx) {
    // a line holds queueCapacity / 8 = 1 waiting attempt
    start(vertx, "{\"callTimeoutMs\":60000,\"maxInFlightPerSender\":1,\"queueCapacity\":8}");
    Future<DeliveryState> running = attemptHeldByBobsServers();
    Future<DeliveryState> waiting = attemptTo("bob");

    DeliveryState turnedAway = attemptTo("bob").await();

    assertThat(turnedAway).isEqualTo(DeliveryState.ACCEPTED);
    assertThat(bed.peers().calls()).as("only the running attempt called").isEqualTo(2);
    assertThat(running.isComplete()).isFalse();
    assertThat(waiting.isComplete()).isFalse();
  }

  @Test
  @DisplayName("an attempt that carries its users reads none; one without reads its sender and recipient once each")
  void usersCarriedAreNotReadAgain(Vertx vertx) {
    start(vertx, "{}");
    SignedPair carried = accepted("alice", alice, "bob");
    var sender = bed.users().find("alice").await().orElseThrow();
    var recipient = bed.users().find("bob").await().orElseThrow();
    int before = bed.users().reads();

    assertThat(bed.services().engine().reserve()).isTrue();
    assertThat(bed.services().engine().submitReserved(new AttemptRequest(DeliveryTestbed.firstAttempt(carried),
        false, null, sender, recipient)).await()).isEqualTo(DeliveryState.DELIVERED);
    assertThat(bed.users().reads()).isEqualTo(before);

    assertThat(attemptTo("bob").await()).isEqualTo(DeliveryState.DELIVERED);
    assertThat(bed.users().reads()).isEqualTo(before + 2);
  }
}
