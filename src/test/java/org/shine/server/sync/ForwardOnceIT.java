package org.shine.server.sync;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmFormatException;
import org.shine.server.support.Eventually;
import org.shine.server.support.Sql;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/**
 * A session's pair reaches the sender's sibling once (issue 18, no work twice): by its forward (seed §4 step 7), not
 * also by sync while the forward is out, and the sibling sends again nothing the source already delivered (it asks
 * the source with the seed's {@code GetDmDeliveryStatus} first).
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 90, timeUnit = TimeUnit.SECONDS)
class ForwardOnceIT {
  private static final String RECEIVE = "ReceiveIncomingMessage";
  private static final String FORWARD = "ReceiveOutcomingMessage";
  private TestWorld world;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx).config(SyncIT.FAST);
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("sync does not offer a session's new pair while its forward is out; the forward's ACK takes it off the"
      + " queue, and a failed forward has it offered at once, not at the hold's end")
  void pairWaitsForItsForward(Vertx vertx) {
    // GIVEN alice's second server is a stub that holds the first forward's answer and refuses the others
    StubPeer s2 = world.stub().named("s2");
    Promise<Object> firstAnswer = Promise.promise();
    AtomicInteger forwards = new AtomicInteger();
    s2.respond(FORWARD, (op, p) -> forwards.incrementAndGet() == 1 ? firstAnswer.future()
        : new StubPeer.Error(503, "STORAGE_UNAVAILABLE", "down"));
    // (a call timeout far beyond the test, so the held forward stays out until the stub answers)
    TestServer s1 = world.server("s1", TestServer.merge(TestServer.json(SyncIT.FAST),
        TestServer.json("{\"delivery\":{\"callTimeoutMs\":60000}}"), TestServer.peersAt("s2", s2.url())));
    TestUser alice = TestUser.create("alice");
    TestUser bob = TestUser.create("bob");
    alice.publish(vertx, List.of(Map.entry("s1", s1.url()), Map.entry("s2", s2.url())), 1, s1.url());
    bob.publish(vertx, List.of(Map.entry("s1", s1.url())), 1, s1.url());
    ShineClient session = world.session(alice, s1);
    ShineClient sibling = s2.sessionOn(vertx, s1.url());
    Sql sql1 = world.sql(s1);

    // WHEN a pair is sent and its forward is out
    session.sendPair(alice.pairTo(bob, "forwarded, not synced")).await();
    Eventually.until("the forward reached s2", 10_000, () -> forwards.get() == 1);

    // THEN it is owed to s2 but not offered
    assertThat(sql1.count("SELECT count(*) FROM sync_queue WHERE owner = $1", alice.login())).isEqualTo(1);
    assertThat(page(sibling).get("items")).isEmpty();

    // WHEN s2 acknowledges the forward THEN it is owed no more
    firstAnswer.complete(Json.MAPPER.createObjectNode());
    Eventually.until("the forward's ACK took the pair off the queue", 10_000,
        () -> sql1.count("SELECT count(*) FROM sync_queue WHERE owner = $1", alice.login()) == 0);
    assertThat(page(sibling).get("items")).isEmpty();

    // WHEN the next pair's forward is refused THEN sync offers it at once (the hold is 30 s)
    SignedPair refused = alice.pairTo(bob, "forward refused, synced instead");
    session.sendPair(refused).await();
    Eventually.until("the refused forward's pair is offered", 10_000, () -> page(sibling).get("items").size() == 1);
    JsonNode item = page(sibling).get("items").get(0);
    assertThat(item.get("owner").asText()).isEqualTo(alice.login());
    assertThat(item.get("type").asText()).isEqualTo("pair");
    assertThat(forwards.get()).isEqualTo(2);
  }

  @Test
  @DisplayName("the sender's sibling asks the source before its own first attempt: forwarded pairs the source"
      + " delivered are stored delivered there and sent to the recipient's server by nobody else")
  void siblingAsksBeforeSending(Vertx vertx) {
    // GIVEN alice on s1 and s2, bob on a server that counts the copies it is handed
    StubPeer bobs = world.stub().acceptEverything();
    world.sites("s1", "s2");
    TestServer s1 = world.server("s1");
    TestServer s2 = world.server("s2");
    world.awaitSessions(s1, s2);
    TestUser alice = world.user("alice", TestWorld.routes(s1, s2), s1, s2);
    TestUser bob = world.user("bob", List.of(Map.entry(bobs.serverLogin(), bobs.url())), s1, s2);
    ShineClient session = world.session(alice, s1);

    // WHEN alice sends ten messages on s1
    for (int i = 0; i < 10; i++) {
      assertThat(session.sendPair(alice.pairTo(bob, "once " + i)).await().path("deliveryState").asText())
          .isEqualTo("delivered");
    }

    // THEN s2 holds them delivered, asked s1 about each, and neither sent any copy twice
    Sql sql2 = world.sql(s2);
    Eventually.until("s2 holds alice's ten pairs, delivered", 20_000,
        () -> sql2.count("SELECT count(*) FROM dm_delivery WHERE owner = $1 AND state = 'delivered'",
            alice.login()) == 10);
    world.awaitRetryRounds(s2, 2);
    world.awaitSyncRounds(s1, s2, 2);
    assertThat(bobs.count(RECEIVE)).as("s1's first attempts only").isEqualTo(10);
    assertThat(sql2.count("SELECT count(*) FROM dm_delivery WHERE owner = $1 AND state <> 'delivered'",
        alice.login())).isZero();
  }

  @Test
  @DisplayName("a forwarded pair is stored and ACKed before the sibling asks the source about it: the forward's answer"
      + " never waits on a call back to its sender; a pair the source then says it delivered is recorded delivered"
      + " and sent by nobody else")
  void forwardIsAnsweredBeforeTheQuestion(Vertx vertx) {
    // GIVEN alice's first server is a stub that answers s2's question only when told; bob's server counts copies;
    // s2 would wait a minute for any call (and its attempt's lease outlasts that)
    StubPeer bobs = world.stub().acceptEverything();
    Promise<Object> status = Promise.promise();
    StubPeer first = world.stub().acceptEverything().respond("GetDmDeliveryStatus", (op, payload) -> status.future());
    TestServer s2 = world.server("s2", "{\"delivery\":{\"callTimeoutMs\":60000,\"leaseMs\":120000}}");
    TestUser alice = world.user("alice", List.of(Map.entry(first.serverLogin(), first.url()),
        Map.entry("s2", s2.url())), s2);
    TestUser bob = world.user("bob", List.of(Map.entry(bobs.serverLogin(), bobs.url())), s2);
    SignedPair pair = alice.pairTo(bob, "forwarded after the first attempt");
    ShineClient asFirst = first.sessionOn(vertx, s2.url());

    // WHEN the stub forwards the pair to s2 (seed §4 step 7)
    asFirst.request(FORWARD, ShineClient.object()
        .put("incomingBlobB64", Base64.getEncoder().encodeToString(pair.incoming().bytes()))
        .put("outgoingBlobB64", Base64.getEncoder().encodeToString(pair.outgoing().bytes()))
        .put("sourceServerLogin", first.serverLogin()), 10_000).await();

    // THEN s2 answered with its question still out, and holds the pair accepted meanwhile
    Sql sql2 = world.sql(s2);
    Eventually.until("s2 asks the source", 20_000, () -> first.count("GetDmDeliveryStatus") == 1);
    assertThat(sql2.count("SELECT count(*) FROM dm_delivery WHERE owner = $1 AND state = 'accepted'",
        alice.login())).isEqualTo(1);

    // WHEN the source says it delivered the pair
    ObjectNode delivered = ShineClient.object().put("known", true).put("delivered", true).put("state", "delivered");
    status.complete(delivered);

    // THEN s2 records it delivered and sends it to nobody
    Eventually.until("s2 holds the pair delivered", 20_000,
        () -> sql2.count("SELECT count(*) FROM dm_delivery WHERE owner = $1 AND state = 'delivered'",
            alice.login()) == 1);
    assertThat(bobs.count(RECEIVE)).isZero();
  }

  @Test
  @DisplayName("the sender's resend of a pair its sibling is still owed forwards it again (whoever stored it may have"
      + " died before its forward, and sync may not reach this server); a resend of a pair the sibling acknowledged"
      + " forwards nothing")
  void resendForwardsWhatTheSiblingLacks(Vertx vertx) {
    // GIVEN alice's second server is a stub that refuses the first forward and acknowledges the others
    StubPeer s2 = world.stub().named("s2");
    List<String> forwarded = new CopyOnWriteArrayList<>();
    s2.respond(FORWARD, (op, p) -> {
      forwarded.add(baseKeyOf(p.get("outgoingBlobB64").asText()));
      return forwarded.size() == 1 ? new StubPeer.Error(503, "STORAGE_UNAVAILABLE", "down")
          : Json.MAPPER.createObjectNode();
    });
    TestServer s1 = world.server("s1", TestServer.merge(TestServer.json(SyncIT.FAST),
        TestServer.peersAt("s2", s2.url())));
    TestUser alice = TestUser.create("alice");
    TestUser bob = TestUser.create("bob");
    alice.publish(vertx, List.of(Map.entry("s1", s1.url()), Map.entry("s2", s2.url())), 1, s1.url());
    bob.publish(vertx, List.of(Map.entry("s1", s1.url())), 1, s1.url());
    ShineClient session = world.session(alice, s1);
    Sql sql1 = world.sql(s1);
    SignedPair pair = alice.pairTo(bob, "stored, never forwarded");
    String baseKey = pair.outgoing().baseKey();

    // WHEN a pair's forward is refused (the stub never pulls: sync cannot carry it)
    session.sendPair(pair).await();
    Eventually.until("the refused forward", 10_000, () -> forwarded.size() == 1);
    assertThat(sql1.count("SELECT count(*) FROM sync_queue WHERE owner = $1", alice.login())).isEqualTo(1);

    // WHEN alice sends it again THEN it is forwarded again, and once acknowledged owed no more
    assertThat(session.sendPair(pair).await().path("deliveryState").asText()).isEqualTo("delivered");
    Eventually.until("the resend's forward was acknowledged", 10_000,
        () -> sql1.count("SELECT count(*) FROM sync_queue WHERE owner = $1", alice.login()) == 0);
    assertThat(forwarded).containsExactly(baseKey, baseKey);

    // WHEN alice sends it a third time, then a new pair THEN only the new pair is forwarded
    session.sendPair(pair).await();
    SignedPair next = alice.pairTo(bob, "a new one");
    session.sendPair(next).await();
    Eventually.until("the new pair's forward", 10_000, () -> forwarded.contains(next.outgoing().baseKey()));
    Eventually.until("the new pair is owed no more", 10_000,
        () -> sql1.count("SELECT count(*) FROM sync_queue WHERE owner = $1", alice.login()) == 0);
    assertThat(forwarded).containsExactly(baseKey, baseKey, next.outgoing().baseKey());
  }

  private static String baseKeyOf(String blobB64) {
    try {
      return DmCodec.parse(Base64.getDecoder().decode(blobB64)).baseKey();
    } catch (DmFormatException e) {
      throw new IllegalStateException(e);
    }
  }

  private static JsonNode page(ShineClient sibling) {
    ObjectNode payload = ShineClient.object().put("sourceServerLogin", "s2").put("limit", 10);
    payload.putArray("ackSyncIds");
    return sibling.request("DmSyncBatch", payload).await();
  }
}
