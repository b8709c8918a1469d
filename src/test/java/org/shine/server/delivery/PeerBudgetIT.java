package org.shine.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.peer.PeerStatus;
import org.shine.server.protocol.Ops;
import org.shine.server.support.Eventually;
import org.shine.server.support.Scrape;
import org.shine.server.support.Sql;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/**
 * The peer budget of PROTOCOL §13 against a tarpit: a route that takes connections and never answers (a
 * {@link StubPeer} whose {@code ReceiveIncomingMessage} answer never comes). Honest deliveries still complete while
 * it is flooded, it never holds more calls than the caps allow, its timeouts make it down (§7.6) until a probe is
 * answered, a peer that never reads is closed once its unsent bytes pass {@code limits.writeQueueBytes}, and
 * attempts that could not run stay {@code accepted} for the retry worker.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class PeerBudgetIT {
  private static final long WAIT_MS = 30_000;
  private TestWorld world;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx);
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("while a route that never answers is flooded, a delivery to an honest server completes, and the"
      + " tarpit never holds more than maxInFlightPerDestination calls")
  void honestDeliveriesBesideATarpit() {
    StubPeer tarpit = tarpit();
    world.sites("s1", "s3");
    TestServer s3 = world.server("s3");
    // eight running places in all: without the budget, the flood's attempts would hold every one for 30 s
    TestServer s1 = senderServer("{\"delivery\":{\"maxInFlight\":8,\"maxInFlightPerDestination\":4,"
        + "\"callTimeoutMs\":30000}}");
    TestUser mallory = world.user("mallory", s1);
    ShineClient session = world.session(mallory, s1);
    TestUser victim = routedTo(tarpit, s1);
    List<Future<JsonNode>> flood = new ArrayList<>();

    // WHEN mallory sends 24 messages to a login routed only to the tarpit
    for (int i = 0; i < 24; i++) {
      flood.add(session.sendPair(mallory.pairTo(victim, "flood " + i)));
    }
    Eventually.until("the tarpit holds its four calls", WAIT_MS,
        () -> tarpit.count(Ops.RECEIVE_INCOMING_MESSAGE) == 4);

    // THEN alice's message to bob on s3 is delivered meanwhile
    TestUser alice = world.user("alice", List.of(Map.entry("s1", s1.url())), s1, s3);
    TestUser bob = world.user("bob", List.of(Map.entry("s3", s3.url())), s1, s3);
    JsonNode answer = world.session(alice, s1).sendPair(alice.pairTo(bob, "hello"), WAIT_MS).await();
    assertThat(answer.path("deliveryState").asText()).isEqualTo("delivered");
    assertThat(tarpit.count(Ops.RECEIVE_INCOMING_MESSAGE)).as("calls the tarpit got").isEqualTo(4);
    assertThat(flood).as("the flood's attempts still wait").noneMatch(Future::isComplete);
    assertThat(world.sql(s1).count("SELECT count(*) FROM dm_delivery WHERE owner = 'mallory' AND state ="
        + " 'accepted'")).as("the flood's rows, stored and accepted").isEqualTo(24);
  }

  @Test
  @DisplayName("one sender's attempts beyond maxInFlightPerSender wait: another sender's attempt to the same"
      + " server runs")
  void perSenderCap() {
    StubPeer tarpit = tarpit();
    TestServer s1 = senderServer("{\"delivery\":{\"maxInFlightPerSender\":2,\"maxInFlightPerDestination\":8,"
        + "\"callTimeoutMs\":30000}}");
    TestUser victim = routedTo(tarpit, s1);
    TestUser mallory = world.user("mallory", s1);
    ShineClient session = world.session(mallory, s1);
    for (int i = 0; i < 6; i++) {
      session.sendPair(mallory.pairTo(victim, "flood " + i));
    }
    Eventually.until("mallory's two attempts reach the tarpit", WAIT_MS,
        () -> tarpit.count(Ops.RECEIVE_INCOMING_MESSAGE) == 2);

    // WHEN another sender writes to the same login
    TestUser carol = world.user("carol", s1);
    SignedPair fromCarol = carol.pairTo(victim, "me too");
    world.session(carol, s1).sendPair(fromCarol);

    // THEN carol's call goes out: the server had room, mallory's own cap held her back
    Eventually.until("carol's call reaches the tarpit", WAIT_MS, () -> received(tarpit, fromCarol) == 1);
    TestUser dave = world.user("dave", s1);
    TestUser erin = world.user("erin", s1);
    assertThat(world.session(dave, s1).sendPair(dave.pairTo(erin, "local")).await().path("deliveryState")
        .asText()).isEqualTo("delivered");
    assertThat(tarpit.count(Ops.RECEIVE_INCOMING_MESSAGE)).as("calls the tarpit got").isEqualTo(3);
  }

  @Test
  @DisplayName("after timeoutsToDown calls in a row timed out the destination is down: calls fail at once; when"
      + " it answers again, the probe finds it up and the waiting messages get their extra attempt")
  void timeoutsMakeItDown() {
    StubPeer tarpit = tarpit();
    // the second schedule point is ten minutes away: a delivery within the test can only be the extra attempt
    TestServer s1 = senderServer("{\"delivery\":{\"callTimeoutMs\":1000,\"timeoutsToDown\":3,"
        + "\"scheduleMs\":[0,600000,1200000]}}");
    TestUser victim = routedTo(tarpit, s1);
    TestUser mallory = world.user("mallory", s1);
    ShineClient session = world.session(mallory, s1);
    for (int i = 0; i < 3; i++) {
      assertThat(session.sendPair(mallory.pairTo(victim, "unanswered " + i)).await().path("deliveryState")
          .asText()).isEqualTo("accepted");
    }

    // THEN the destination is down
    Eventually.until("shine_peer_up of the tarpit is 0", WAIT_MS,
        () -> Scrape.of(s1).value("shine_peer_up", "peer", tarpit.serverLogin()) == 0);
    PeerStatus status = peerStatus(s1, tarpit.url());
    assertThat(status.down()).isTrue();
    assertThat(status.lastError()).contains("calls timed out");

    // WHEN one more message is sent, THEN its call fails at once: the tarpit never sees it
    SignedPair fourth = mallory.pairTo(victim, "while down");
    assertThat(session.sendPair(fourth).await().path("deliveryState").asText()).isEqualTo("accepted");
    assertThat(received(tarpit, fourth)).isZero();

    // WHEN the tarpit answers again
    tarpit.respond(Ops.RECEIVE_INCOMING_MESSAGE, (op, payload) -> ShineClient.object());

    // THEN the probe finds it up and the waiting message goes by an extra attempt
    Sql sql = world.sql(s1);
    Eventually.until("the fourth message is delivered", WAIT_MS,
        () -> "delivered".equals(sql.state(fourth)));
    assertThat(sql.attempts(fourth)).as("no scheduled attempt ran").isEqualTo(1);
    assertThat(Scrape.of(s1).value("shine_peer_up", "peer", tarpit.serverLogin())).isEqualTo(1);
    assertThat(peerStatus(s1, tarpit.url()).down()).isFalse();
  }

  @Test
  @DisplayName("a peer that never reads is closed once its unsent bytes pass writeQueueBytes, and marked down")
  void neverReadingPeerIsClosed() {
    StubPeer silent = tarpit().pauseReads();
    TestServer s1 = senderServer("{\"limits\":{\"writeQueueBytes\":1024,\"maxInFlightPerConnection\":256,"
        + "\"sendsPerUserPerS\":1000},"
        + "\"delivery\":{\"callTimeoutMs\":60000,\"maxInFlightPerDestination\":256}}");
    TestUser victim = routedTo(silent, s1);
    TestUser mallory = world.user("mallory", s1);
    List<ShineClient> sessions = List.of(world.session(mallory, s1), world.session(mallory, s1));
    byte[] body = new byte[60_000];
    List<Future<JsonNode>> sends = new ArrayList<>();

    // WHEN mallory sends large messages to a login routed to it until the server gives up on the connection
    for (int i = 0; i < 200 && !down(s1, silent.url()); i++) {
      sends.add(sessions.get(i % 2).sendPair(mallory.pairTo(victim.login(), System.currentTimeMillis(), body)));
    }

    // THEN its connection was closed and the destination is down
    Eventually.until("the never-reading peer is down", WAIT_MS, () -> down(s1, silent.url()));
    assertThat(peerStatus(s1, silent.url()).lastError()).contains("writeQueueBytes");
    assertThat(Scrape.of(s1).value("shine_peer_up", "peer", silent.serverLogin())).isZero();
    Eventually.until("every send is answered", WAIT_MS, () -> sends.stream().allMatch(Future::isComplete));
    assertThat(sends).allSatisfy(send -> assertThat(send.result().path("deliveryState").asText())
        .isEqualTo("accepted"));
  }

  @Test
  @DisplayName("attempts that could not run (their sender's line full) stay accepted, and the retry worker"
      + " delivers them all")
  void nothingLost() {
    List<Promise<Object>> held = new CopyOnWriteArrayList<>();
    StubPeer tarpit = tarpit().respond(Ops.RECEIVE_INCOMING_MESSAGE, (op, payload) -> {
      Promise<Object> answer = Promise.promise();
      held.add(answer);
      return answer.future();
    });
    // one attempt of a sender at a time, and a line of one (queueCapacity / 8)
    TestServer s1 = senderServer("{\"delivery\":{\"maxInFlightPerSender\":1,\"queueCapacity\":8,"
        + "\"callTimeoutMs\":30000,\"workerPeriodMs\":200,\"leaseMs\":1000}}");
    TestUser victim = routedTo(tarpit, s1);
    TestUser mallory = world.user("mallory", s1);
    ShineClient session = world.session(mallory, s1);
    List<SignedPair> pairs = new ArrayList<>();
    List<Future<JsonNode>> answers = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      pairs.add(mallory.pairTo(victim, "message " + i));
      answers.add(session.sendPair(pairs.get(i)));
    }

    // THEN one runs, one waits, the other four are answered accepted at once, not attempted
    Eventually.until("four sends answered", WAIT_MS, () -> answers.stream().filter(Future::isComplete).count() == 4);
    assertThat(answers.stream().filter(Future::isComplete)).allSatisfy(a -> assertThat(a.result()
        .path("deliveryState").asText()).isEqualTo("accepted"));
    Sql sql = world.sql(s1);
    assertThat(pairs).allSatisfy(pair -> assertThat(sql.state(pair)).isEqualTo("accepted"));
    assertThat(tarpit.count(Ops.RECEIVE_INCOMING_MESSAGE)).isEqualTo(1);

    // WHEN the tarpit answers, THEN every message is delivered, the four by the retry worker
    tarpit.respond(Ops.RECEIVE_INCOMING_MESSAGE, (op, payload) -> ShineClient.object());
    held.forEach(answer -> answer.complete(ShineClient.object()));
    Eventually.until("all six delivered", WAIT_MS, () -> pairs.stream()
        .allMatch(pair -> "delivered".equals(sql.state(pair))));
    assertThat(pairs).allSatisfy(pair -> assertThat(received(tarpit, pair)).isPositive());
  }

  // ---- helpers -------------------------------------------------------------------------------------------

  /** A stub that answers every op (UNKNOWN_OP, as a v1 server) but ReceiveIncomingMessage, which it never does. */
  private StubPeer tarpit() {
    return world.stub().respond(Ops.RECEIVE_INCOMING_MESSAGE, (op, payload) -> Promise.promise().future());
  }

  private TestServer senderServer(String overridesJson) {
    world.sites("s1", "s3");
    return world.server("s1", overridesJson);
  }

  /** A login whose only route is {@code peer}, its card published on {@code server}. */
  private TestUser routedTo(StubPeer peer, TestServer server) {
    return world.user(TestWorld.unique("victim"), List.of(Map.entry(peer.serverLogin(), peer.url())), server);
  }

  private static long received(StubPeer peer, SignedPair pair) {
    String blob = Base64.getEncoder().encodeToString(pair.incoming().bytes());
    return peer.requests().stream().filter(r -> r.op().equals(Ops.RECEIVE_INCOMING_MESSAGE)
        && blob.equals(r.payload().path("incomingBlobB64").asText())).count();
  }

  /** What the node's admin API would show of its connection to {@code url}. */
  private static PeerStatus peerStatus(TestServer server, String url) {
    return connection(server, url).orElseThrow(() -> new AssertionError("no connection to " + url));
  }

  /** True once the node has a connection to {@code url} and finds it down. */
  private static boolean down(TestServer server, String url) {
    return connection(server, url).map(PeerStatus::down).orElse(false);
  }

  private static Optional<PeerStatus> connection(TestServer server, String url) {
    PeerStatus.All all = BusReplies.<PeerStatus.All>request(server.vertx().eventBus(), Addresses.PEER_STATUS,
        "status", 10_000).await();
    return all.peers().stream().filter(p -> p.url().equals(url)).findFirst();
  }
}
