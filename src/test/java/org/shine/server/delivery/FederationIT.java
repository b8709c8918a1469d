package org.shine.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.dm.DmCodec;
import org.shine.server.support.Eventually;
import org.shine.server.support.Sql;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/**
 * Delivery across servers (seed §1-§6, PROTOCOL §6-§7) with real servers on loopback ports, each with its own
 * database, stub peers where a test needs to count or script calls, and a schedule compressed to 0/0.4/0.8/1.2/
 * 1.6 s through config. The call timeout is not compressed as far: "delivered in the response" means a recipient
 * server answered the first attempt within it, and every server of this class shares one JVM with the test, so a
 * pause of that JVM on a loaded machine must not turn an answer into a timeout (no stub here leaves a call
 * unanswered, so no test waits for the timeout).
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class FederationIT {
  static final String FAST = "{\"delivery\":{\"scheduleMs\":[0,400,800,1200,1600],\"workerPeriodMs\":50,"
      + "\"callTimeoutMs\":2000,\"leaseMs\":3000}}";
  private static final String RECEIVE = "ReceiveIncomingMessage";
  private static TestWorld world;
  private static Vertx vertx;
  private static TestServer s1;
  private static TestServer s3;
  private static TestServer s4;
  private static Sql s1Sql;
  private static Sql s3Sql;
  private TestWorld test;

  @BeforeAll
  static void startServers() {
    world = TestWorld.on(Vertx.vertx()).config(FAST);
    vertx = world.vertx();
    TestServer[] servers = world.servers("s1", "s3", "s4");
    s1 = servers[0];
    s3 = servers[1];
    s4 = servers[2];
    s1Sql = world.sql(s1);
    s3Sql = world.sql(s3);
  }

  @AfterAll
  static void stopServers() {
    world.close();
    vertx.close().await();
  }

  @BeforeEach
  void openTest() {
    test = world.child();
  }

  @AfterEach
  void closeTest() {
    test.close();
  }

  @Test
  @DisplayName("(a) both recipient servers up: delivered in the response, and bob's sessions on both get it")
  void bothRecipientServersUp() {
    // s1's own view of s3 and s4, not luck: an earlier test's timeouts may have left one down until its probe
    world.awaitPeersUp(s1, s3, s4);
    TestUser alice = user("alice");
    TestUser bob = user("bob");
    alice.publish(vertx, TestWorld.routes(s1), 1, s1.url(), s3.url(), s4.url());
    bob.publish(vertx, TestWorld.routes(s3, s4), 1, s1.url(), s3.url(), s4.url());
    List<JsonNode> onS3 = new CopyOnWriteArrayList<>();
    List<JsonNode> onS4 = new CopyOnWriteArrayList<>();
    test.session(bob, s3).onEvent(onS3::add);
    test.session(bob, s4).onEvent(onS4::add);
    SignedPair pair = alice.pairTo(bob, "hello across servers");

    JsonNode result = test.session(alice, s1).sendPair(pair).await();

    assertThat(result.get("deliveryState").asText()).isEqualTo("delivered");
    Eventually.until("bob's sessions on s3 and s4 get the message", 5_000, () -> !onS3.isEmpty() && !onS4.isEmpty());
    for (JsonNode event : List.of(onS3.get(0), onS4.get(0))) {
      assertThat(event.get("op").asText()).isEqualTo("IncomingDirectMessage");
      assertThat(event.at("/payload/messageKey").asText()).isEqualTo(pair.incoming().messageKey());
    }
    assertThat(s1Sql.state(pair)).isEqualTo("delivered");
  }

  @Test
  @DisplayName("(b) one recipient server down: still delivered by the other")
  void oneRecipientServerDown() {
    world.awaitPeersUp(s1, s3);
    TestUser alice = user("alice");
    TestUser bob = user("bob");
    alice.publish(vertx, TestWorld.routes(s1), 1, s1.url(), s3.url());
    bob.publish(vertx, List.of(Map.entry("s3", s3.url()), TestWorld.deadRoute()), 1, s1.url(), s3.url());
    SignedPair pair = alice.pairTo(bob, "one is down");

    JsonNode result = test.session(alice, s1).sendPair(pair).await();

    assertThat(result.get("deliveryState").asText()).isEqualTo("delivered");
    assertThat(s3Sql.count("SELECT count(*) FROM dm_message WHERE owner = $1 AND base_key = $2", bob.login(),
        pair.outgoing().baseKey())).isEqualTo(1);
  }

  @Test
  @DisplayName("(c) both down, one back before the 4th attempt: delivered at that attempt, the sender is told")
  void recipientComesBack() {
    TestUser alice = user("alice");
    TestUser bob = user("bob");
    AtomicBoolean up = new AtomicBoolean(false);
    StubPeer first = stub().respond(RECEIVE, (op, p) -> up.get() ? Json.MAPPER.createObjectNode()
        : new StubPeer.Error(503, "STORAGE_UNAVAILABLE", "down"));
    StubPeer second = stub().respond(RECEIVE, (op, p) -> new StubPeer.Error(503, "STORAGE_UNAVAILABLE", "down"));
    alice.publish(vertx, TestWorld.routes(s1), 1, s1.url());
    bob.publish(vertx, List.of(Map.entry(first.serverLogin(), first.url()), Map.entry(second.serverLogin(), second.url())), 1, s1.url());
    ShineClient session = test.session(alice, s1);
    List<JsonNode> events = new CopyOnWriteArrayList<>();
    session.onEvent(events::add);
    SignedPair pair = alice.pairTo(bob, "are you there?");

    JsonNode result = session.sendPair(pair).await();
    assertThat(result.get("deliveryState").asText()).isEqualTo("accepted");
    Eventually.until("three attempts", 5_000, () -> first.count(RECEIVE) >= 3);
    up.set(true);

    Eventually.until("a DmDeliveryStateChanged event", 5_000, () -> !events.isEmpty());
    JsonNode event = events.get(0);
    assertThat(event.get("op").asText()).isEqualTo("DmDeliveryStateChanged");
    assertThat(event.at("/payload/outgoingKey").asText()).isEqualTo(pair.outgoing().messageKey());
    assertThat(event.at("/payload/baseKey").asText()).isEqualTo(pair.outgoing().baseKey());
    assertThat(event.at("/payload/deliveryState").asText()).isEqualTo("delivered");
    assertThat(first.count(RECEIVE)).isEqualTo(4);
    assertThat(s1Sql.attempts(pair)).isEqualTo(4);
    JsonNode history = session.request("GetDirectMessages", ShineClient.object().put("peer", bob.login()))
        .await();
    assertThat(history.at("/messages/0/deliveryState").asText()).isEqualTo("delivered");
  }

  @Test
  @DisplayName("(d) never back: failed after exactly five attempts, and no call after that")
  void neverBack() {
    TestUser alice = user("alice");
    TestUser bob = user("bob");
    StubPeer dead = stub().respond(RECEIVE, (op, p) -> new StubPeer.Error(503, "STORAGE_UNAVAILABLE", "down"));
    alice.publish(vertx, TestWorld.routes(s1), 1, s1.url());
    bob.publish(vertx, List.of(Map.entry(dead.serverLogin(), dead.url())), 1, s1.url());
    ShineClient session = test.session(alice, s1);
    List<JsonNode> events = new CopyOnWriteArrayList<>();
    session.onEvent(events::add);
    SignedPair pair = alice.pairTo(bob, "into the void");

    session.sendPair(pair).await();

    Eventually.until("the message fails", 6_000, () -> "failed".equals(s1Sql.state(pair)));
    // no sixth call: s1's retry worker claims due rows for three more schedule points, and never this one
    test.awaitRetryRounds(s1, 3);
    assertThat(dead.count(RECEIVE)).isEqualTo(5);
    assertThat(s1Sql.attempts(pair)).isEqualTo(5);
    assertThat(s1Sql.count("SELECT count(*) FROM dm_delivery WHERE base_key = $1 AND next_attempt_at_ms IS NULL",
        pair.outgoing().baseKey())).isEqualTo(1);
    assertThat(events).hasSize(1);
    assertThat(events.get(0).at("/payload/deliveryState").asText()).isEqualTo("failed");
  }

  @Test
  @DisplayName("(e) the sender's sibling says delivered at attempt 3: delivered with no call to the recipient")
  void siblingSaysDelivered() {
    TestUser alice = user("alice");
    TestUser bob = user("bob");
    StubPeer sibling = stub()
        .respond("GetDmDeliveryStatus", (op, p) -> Json.MAPPER.createObjectNode()
            .put("messageKey", p.path("messageKey").asText()).put("known", true).put("delivered", true))
        .respond("ReceiveOutcomingMessage", (op, p) -> Json.MAPPER.createObjectNode());
    StubPeer recipient = stub().respond(RECEIVE, (op, p) -> new StubPeer.Error(503, "STORAGE_UNAVAILABLE", "x"));
    alice.publish(vertx, List.of(Map.entry("s1", s1.url()), Map.entry(sibling.serverLogin(), sibling.url())), 1, s1.url());
    bob.publish(vertx, List.of(Map.entry(recipient.serverLogin(), recipient.url())), 1, s1.url());
    SignedPair pair = alice.pairTo(bob, "ask my sibling");

    test.session(alice, s1).sendPair(pair).await();

    Eventually.until("delivered", 5_000, () -> "delivered".equals(s1Sql.state(pair)));
    assertThat(recipient.count(RECEIVE)).isEqualTo(2);
    assertThat(sibling.count("GetDmDeliveryStatus")).isEqualTo(1);
    assertThat(sibling.requests().stream().filter(r -> r.op().equals("GetDmDeliveryStatus")).findFirst()
        .orElseThrow().payload().get("messageKey").asText()).isEqualTo(pair.outgoing().messageKey());
    assertThat(sibling.count("ReceiveOutcomingMessage")).isEqualTo(1);
  }

  @Test
  @DisplayName("(f) a sibling that rejects the op, or is down, never blocks our own attempt")
  void siblingUnhelpful() {
    TestUser alice = user("alice");
    TestUser bob = user("bob");
    TestUser carol = user("carol");
    StubPeer rejecting = stub();
    AtomicInteger calls = new AtomicInteger();
    StubPeer recipient = stub().respond(RECEIVE, (op, p) -> calls.incrementAndGet() >= 5
        ? Json.MAPPER.createObjectNode() : new StubPeer.Error(503, "STORAGE_UNAVAILABLE", "x"));
    alice.publish(vertx, List.of(Map.entry("s1", s1.url()), Map.entry(rejecting.serverLogin(), rejecting.url())), 1, s1.url());
    carol.publish(vertx, List.of(Map.entry("s1", s1.url()), TestWorld.deadRoute()), 1, s1.url());
    bob.publish(vertx, List.of(Map.entry(recipient.serverLogin(), recipient.url())), 1, s1.url());
    SignedPair fromAlice = alice.pairTo(bob, "sibling says UNKNOWN_OP");
    SignedPair fromCarol = carol.pairTo(bob, "sibling is down");

    test.session(alice, s1).sendPair(fromAlice).await();
    test.session(carol, s1).sendPair(fromCarol).await();

    // 2 calls each for attempts 1 and 2; the 5th call overall (at attempt 3) is the first to succeed
    Eventually.until("both delivered", 5_000, () -> "delivered".equals(s1Sql.state(fromAlice))
        && "delivered".equals(s1Sql.state(fromCarol)));
    assertThat(rejecting.count("GetDmDeliveryStatus")).isGreaterThanOrEqualTo(1);
    assertThat(recipient.count(RECEIVE)).isGreaterThanOrEqualTo(5);
    assertThat(s1Sql.attempts(fromAlice) + s1Sql.attempts(fromCarol)).isGreaterThanOrEqualTo(5);
  }

  @Test
  @DisplayName("(g) a route changed while accepted is used; a changed route never reopens a terminal state")
  void routesChange() {
    TestUser alice = user("alice");
    TestUser bob = user("bob");
    TestUser carol = user("carol");
    StubPeer old = stub().respond(RECEIVE, (op, p) -> new StubPeer.Error(503, "STORAGE_UNAVAILABLE", "x"));
    StubPeer fresh = stub().respond(RECEIVE, (op, p) -> Json.MAPPER.createObjectNode());
    alice.publish(vertx, TestWorld.routes(s1), 1, s1.url());
    bob.publish(vertx, List.of(Map.entry(old.serverLogin(), old.url())), 1, s1.url());
    carol.publish(vertx, List.of(Map.entry(old.serverLogin(), old.url())), 1, s1.url());
    ShineClient session = test.session(alice, s1);
    SignedPair toBob = alice.pairTo(bob, "you moved?");
    SignedPair toCarol = alice.pairTo(carol, "doomed");
    session.sendPair(toCarol).await();
    Eventually.until("carol's message fails", 6_000, () -> "failed".equals(s1Sql.state(toCarol)));

    session.sendPair(toBob).await();
    bob.publish(vertx, List.of(Map.entry(fresh.serverLogin(), fresh.url())), 2, s1.url());
    carol.publish(vertx, List.of(Map.entry(fresh.serverLogin(), fresh.url())), 2, s1.url());

    Eventually.until("bob's message delivered through the new route", 5_000,
        () -> "delivered".equals(s1Sql.state(toBob)));
    bob.publish(vertx, List.of(Map.entry(old.serverLogin(), old.url())), 3, s1.url());
    long oldCalls = old.count(RECEIVE);
    // the new route reopens neither: s1's retry worker claims due rows for three more schedule points
    test.awaitRetryRounds(s1, 3);
    assertThat(fresh.requests().stream().filter(r -> r.op().equals(RECEIVE))
        .map(r -> r.payload().get("incomingBlobB64").asText()).toList())
        .containsExactly(Base64.getEncoder().encodeToString(toBob.incoming().bytes()));
    assertThat(old.count(RECEIVE)).isEqualTo(oldCalls);
    assertThat(s1Sql.state(toBob)).isEqualTo("delivered");
    assertThat(s1Sql.state(toCarol)).isEqualTo("failed");
  }

  @Test
  @DisplayName("(h) two nodes' retry workers on one database never run one row's attempt twice")
  void twoWorkersShareRows() {
    String fastTwoWorkers = "{\"delivery\":{\"scheduleMs\":[0,400,800,1200,1600],\"workerPeriodMs\":20,"
        + "\"callTimeoutMs\":500,\"leaseMs\":3000},\"instances\":{\"retry\":2}}";
    TestServer nodeA = test.server("n1", fastTwoWorkers);
    TestServer nodeB = test.node(nodeA, fastTwoWorkers);
    Map<String, AtomicInteger> callsPerMessage = new HashMap<>();
    StubPeer dead = stub().respond(RECEIVE, (op, p) -> {
      synchronized (callsPerMessage) {
        callsPerMessage.computeIfAbsent(baseKeyOf(p), k -> new AtomicInteger()).incrementAndGet();
      }
      return new StubPeer.Error(503, "STORAGE_UNAVAILABLE", "down");
    });
    TestUser alice = user("alice");
    TestUser bob = user("bob");
    alice.publish(vertx, TestWorld.routes(nodeA), 1, nodeA.url());
    bob.publish(vertx, List.of(Map.entry(dead.serverLogin(), dead.url())), 1, nodeA.url());
    ShineClient session = test.session(alice, nodeA);
    List<SignedPair> pairs = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      SignedPair pair = alice.pairTo(bob, "contended " + i);
      pairs.add(pair);
      session.sendPair(pair).await();
    }
    Sql sql = test.sql(nodeA);
    Eventually.until("every message fails", 15_000, () -> sql.count(
        "SELECT count(*) FROM dm_delivery WHERE state = 'failed' AND owner = $1", alice.login()) == pairs.size());
    // no call after the fifth: the workers of both nodes claim due rows for three more schedule points
    test.awaitRetryRounds(nodeA, 3);
    synchronized (callsPerMessage) {
      assertThat(callsPerMessage).hasSize(pairs.size());
      assertThat(callsPerMessage.values()).allSatisfy(calls -> assertThat(calls.get()).isEqualTo(5));
    }
    assertThat(nodeB.url()).isNotEqualTo(nodeA.url());
  }

  @Test
  @DisplayName("(i) a recipient's server stores a copy once however many times it arrives")
  void repeatedArrivalStoredOnce() {
    TestUser alice = user("alice");
    TestUser bob = user("bob");
    alice.publish(vertx, TestWorld.routes(s1), 1, s1.url(), s3.url());
    bob.publish(vertx, TestWorld.routes(s3), 1, s3.url());
    List<JsonNode> events = new CopyOnWriteArrayList<>();
    ShineClient bobSession = test.session(bob, s3);
    bobSession.onEvent(events::add);
    SignedPair pair = alice.pairTo(bob, "again and again");
    ShineClient peer = test.anonymous(s3);

    for (int i = 0; i < 5; i++) {
      JsonNode ack = peer.request(RECEIVE, ShineClient.object()
          .put("incomingBlobB64", Base64.getEncoder().encodeToString(pair.incoming().bytes()))
          .put("sourceServerLogin", "s1")).await();
      assertThat(ack.get("messageKey").asText()).isEqualTo(pair.incoming().messageKey());
    }
    bobSession.request("GetUserCard", ShineClient.object().put("login", bob.login())).await();

    String baseKey = pair.outgoing().baseKey();
    assertThat(s3Sql.count("SELECT count(*) FROM dm_message WHERE owner = $1 AND base_key = $2", bob.login(),
        baseKey)).isEqualTo(1);
    assertThat(s3Sql.count("SELECT count(*) FROM sync_queue WHERE owner = $1 AND item_key = $2", bob.login(),
        baseKey)).as("one sync item").isEqualTo(1);
    assertThat(events).hasSize(1);
  }

  @Test
  @DisplayName("server ops: synced on arrival only on a server session of the owner's sibling; a spoofed source is unsynced (anonymous) or 403 (another server's session); 421 for users not served here")
  void sourceServerRules() {
    TestUser alice = user("alice");
    TestUser bob = user("bob");
    TestUser carol = user("carol");
    alice.publish(vertx, TestWorld.routes(s1), 1, s3.url());
    bob.publish(vertx, TestWorld.routes(s3, s4), 1, s3.url());
    carol.publish(vertx, TestWorld.routes(s4), 1, s3.url());
    ShineClient peer = test.serverSession(s4, s3);
    ShineClient anonymous = test.anonymous(s3);
    ShineClient other = test.serverSession(s1, s3);
    SignedPair fromSibling = alice.pairTo(bob, "via bob's sibling");
    SignedPair spoofed = alice.pairTo(bob, "claims to be bob's sibling");
    SignedPair fromElsewhere = alice.pairTo(bob, "via another server");
    SignedPair fromClient = alice.pairTo(bob, "via no server");

    receive(peer, fromSibling, "s4");
    receive(anonymous, spoofed, "s4");
    receive(other, fromElsewhere, "s1");
    receive(peer, fromClient, null);

    assertThat(synced(s3Sql, bob, fromSibling)).isTrue();
    assertThat(synced(s3Sql, bob, spoofed)).isFalse();
    assertThat(synced(s3Sql, bob, fromElsewhere)).isFalse();
    assertThat(synced(s3Sql, bob, fromClient)).isFalse();
    SignedPair lying = alice.pairTo(bob, "s4's session claims s1");
    assertThatCode(peer, () -> receive(peer, lying, "s1"), 403, "SOURCE_MISMATCH");
    assertThat(s3Sql.count("SELECT count(*) FROM dm_message WHERE owner = $1 AND base_key = $2", bob.login(),
        lying.outgoing().baseKey())).isZero();
    SignedPair toCarol = alice.pairTo(carol, "carol is not served here");
    assertThatCode(peer, () -> receive(peer, toCarol, "s4"), 421, "NOT_ACCESS_SERVER");
    assertThatCode(peer, () -> peer.request("ReceiveOutcomingMessage", ShineClient.object()
        .put("incomingBlobB64", Base64.getEncoder().encodeToString(toCarol.incoming().bytes()))
        .put("outgoingBlobB64", Base64.getEncoder().encodeToString(toCarol.outgoing().bytes()))).await(),
        421, "NOT_ACCESS_SERVER");
    JsonNode status = peer.request("GetDmDeliveryStatus", ShineClient.object()
        .put("messageKey", fromSibling.outgoing().messageKey())).await();
    assertThat(status.get("known").asBoolean()).isFalse();
    assertThat(status.get("delivered").asBoolean()).isFalse();
  }

  @Test
  @DisplayName("(j) the sibling's own schedule delivers after the original server dies following the forward")
  void siblingTakesOver() {
    // a schedule whose later points lie well after the origin's shutdown (which drains for a while): the sibling must
    // still be trying when the recipient comes back
    test.sites("sa", "sb");
    String slowLastPoints = "{\"delivery\":{\"scheduleMs\":[0,400,1000,4000,15000],\"workerPeriodMs\":50,"
        + "\"callTimeoutMs\":500,\"leaseMs\":3000}}";
    TestServer[] both = {test.server("sa", slowLastPoints), test.server("sb", slowLastPoints)};
    test.awaitSessions(both);
    TestServer origin = both[0];
    TestServer sibling = both[1];
    AtomicBoolean up = new AtomicBoolean(false);
    StubPeer recipient = stub().respond(RECEIVE, (op, p) -> up.get() ? Json.MAPPER.createObjectNode()
        : new StubPeer.Error(503, "STORAGE_UNAVAILABLE", "down"));
    TestUser alice = user("alice");
    TestUser bob = user("bob");
    alice.publish(vertx, TestWorld.routes(origin, sibling), 1, origin.url(), sibling.url());
    bob.publish(vertx, List.of(Map.entry(recipient.serverLogin(), recipient.url())), 1, origin.url(), sibling.url());
    SignedPair pair = alice.pairTo(bob, "carry on without me");

    test.session(alice, origin).sendPair(pair).await();
    Sql sibSql = test.sql(sibling);
    Eventually.until("the sibling holds the pair", 5_000, () -> sibSql.count(
        "SELECT count(*) FROM dm_message WHERE owner = $1 AND base_key = $2", alice.login(),
        pair.outgoing().baseKey()) == 1);
    origin.close();
    up.set(true);

    Eventually.until("the sibling delivers it", 20_000, () -> "delivered".equals(sibSql.state(pair)));
    assertThat(recipient.requests().stream().filter(r -> r.op().equals(RECEIVE))
        .map(r -> r.payload().path("sourceServerLogin").asText())).contains("sb");
  }

  // ---- helpers

  private static void receive(ShineClient peer, SignedPair pair, String source) {
    var payload = ShineClient.object()
        .put("incomingBlobB64", Base64.getEncoder().encodeToString(pair.incoming().bytes()));
    if (source != null) {
      payload.put("sourceServerLogin", source);
    }
    peer.request(RECEIVE, payload).await();
  }

  /** A stored copy is synced when no sync queue row owes it to anybody (V13: a copy is its own sync item). */
  private static boolean synced(Sql sql, TestUser owner, SignedPair pair) {
    assertThat(sql.count("SELECT count(*) FROM dm_message WHERE owner = $1 AND base_key = $2", owner.login(),
        pair.outgoing().baseKey())).isEqualTo(1);
    return sql.count("SELECT count(*) FROM sync_queue WHERE owner = $1 AND item_key = $2", owner.login(),
        pair.outgoing().baseKey()) == 0;
  }

  private static void assertThatCode(ShineClient peer, Runnable call, int status, String code) {
    org.assertj.core.api.Assertions.assertThatThrownBy(call::run)
        .isInstanceOfSatisfying(org.shine.server.client.ShineClientException.class, e -> {
          assertThat(e.status()).isEqualTo(status);
          assertThat(e.code()).isEqualTo(code);
        });
  }

  private StubPeer stub() {
    return test.stub();
  }

  private static TestUser user(String prefix) {
    return TestUser.create(TestWorld.unique(prefix));
  }

  private static String baseKeyOf(JsonNode receivePayload) {
    try {
      return DmCodec.parse(Base64.getDecoder().decode(receivePayload.get("incomingBlobB64").asText())).baseKey();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}
