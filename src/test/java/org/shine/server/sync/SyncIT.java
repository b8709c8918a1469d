package org.shine.server.sync;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.support.Eventually;
import org.shine.server.support.Sql;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/** Two-server sync (seed §7, PROTOCOL §8) between real servers, with a compressed schedule and sync period. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 180, timeUnit = TimeUnit.SECONDS)
class SyncIT {
  static final String FAST = "{\"delivery\":{\"scheduleMs\":[0,400,800,1200,1600],\"workerPeriodMs\":50,"
      + "\"callTimeoutMs\":2500,\"leaseMs\":3000},\"sync\":{\"periodMs\":200,\"pageSize\":50}}";
  /** FAST with a last point 4 s out, so a row that joins it stays accepted long enough to be looked at. */
  static final String LONG_LAST_POINT = "{\"delivery\":{\"scheduleMs\":[0,400,800,1200,4000],\"workerPeriodMs\":50,"
      + "\"callTimeoutMs\":2500,\"leaseMs\":3000},\"sync\":{\"periodMs\":200,\"pageSize\":50}}";
  /** No retry ticks in a test's time (accepted rows stay as they were stored), a last point 3 s out. */
  static final String NO_WORKER_TICKS = "{\"delivery\":{\"scheduleMs\":[0,400,800,1200,3000],"
      + "\"workerPeriodMs\":600000,\"callTimeoutMs\":2500,\"leaseMs\":3000},"
      + "\"sync\":{\"periodMs\":200,\"pageSize\":50}}";
  private static final String RECEIVE = "ReceiveIncomingMessage";
  private TestWorld world;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx).config(FAST);
  }

  @AfterEach
  void close() {
    world.close();
  }

  /* an owner's items still owed: copies (V13: each its own queue row) and outbox items not synced */
  private static final String UNSYNCED_OF = "SELECT (SELECT count(*) FROM sync_queue WHERE owner = $1"
      + " AND item_type IN (1, 2)) + (SELECT count(*) FROM sync_outbox WHERE owner = $1 AND NOT synced)";

  @Test
  @DisplayName("siblings down during 200 sends catch up on return: every item, exactly once, and no bouncing")
  void siblingsCatchUp(Vertx vertx) {
    TestWorld.Federation f = world.federation();
    TestUser alice = f.alice();
    TestUser bob = f.bob();
    TestServer s1 = f.s1();
    TestServer s3 = f.s3();
    // GIVEN alice's and bob's second servers are down
    f.s2().close();
    f.s4().close();
    ShineClient session = world.session(alice, s1);
    for (int i = 0; i < 200; i++) {
      session.sendPair(alice.pairTo(bob, "while you were out " + i)).await();
    }

    // WHEN they come back
    TestServer s2 = world.restart(f.s2());
    TestServer s4 = world.restart(f.s4());

    // THEN each has every item exactly once, and the sources hold nothing unsynced for them
    Sql sql1 = world.sql(s1);
    Sql sql2 = world.sql(s2);
    Sql sql3 = world.sql(s3);
    Sql sql4 = world.sql(s4);
    Eventually.until("s2 holds alice's 200 pairs and s4 bob's 200 copies", 30_000,
        () -> sql2.count("SELECT count(*) FROM dm_message WHERE owner = $1", alice.login()) == 200
            && sql4.count("SELECT count(*) FROM dm_message WHERE owner = $1", bob.login()) == 200);
    Eventually.until("the sources' outboxes are acknowledged", 10_000,
        () -> sql1.count(UNSYNCED_OF, alice.login()) == 0
            && sql3.count(UNSYNCED_OF, bob.login()) == 0);
    // and nothing bounces: both pairs of siblings pull from each other twice more
    world.awaitSyncRounds(s1, s2, 2);
    world.awaitSyncRounds(s3, s4, 2);
    assertThat(sql2.count("SELECT count(*) FROM dm_message WHERE owner = $1", alice.login())).isEqualTo(200);
    assertThat(sql4.count("SELECT count(*) FROM dm_message WHERE owner = $1", bob.login())).isEqualTo(200);
    // arrived from the sibling: recorded as synced, so nothing goes back
    assertThat(sql2.count(UNSYNCED_OF, alice.login()))
        .isZero();
    assertThat(sql4.count(UNSYNCED_OF, bob.login()))
        .isZero();
    assertThat(sql1.count("SELECT count(*) FROM dm_message WHERE owner = $1", alice.login())).isEqualTo(200);
    // the pairs pulled by s2 were delivered already: s2 has their states, none left to send
    assertThat(sql2.count("SELECT count(*) FROM dm_delivery WHERE owner = $1 AND state = 'accepted'",
        alice.login())).isZero();
  }

  @Test
  @DisplayName("a copy both recipient servers stored crosses the sync at most once: the puller that finds it stored"
      + " ACKs it and owes it back to nobody (issue 18, no work twice)")
  void copyHeldByBothIsOwedByNeither(Vertx vertx) {
    // s3 pulls on start only; s4 pulls every 200 ms: only s4's pulls can settle what either owes the other (s3 offers
    // its copies at once, s4 holds its own: copyOfBothIsOfferedByTheFirstServerOnly)
    BothHold both = twentyCopiesOnBoth("s3");
    TestUser bob = both.bob();
    Sql sql3 = world.sql(both.s3());
    Sql sql4 = world.sql(both.s4());

    Eventually.until("neither owes the other bob's copies", 30_000,
        () -> sql3.count("SELECT count(*) FROM sync_queue WHERE owner = $1", bob.login()) == 0
            && sql4.count("SELECT count(*) FROM sync_queue WHERE owner = $1", bob.login()) == 0);
    assertThat(sql3.count("SELECT count(*) FROM dm_message WHERE owner = $1", bob.login())).isEqualTo(20);
    assertThat(sql4.count("SELECT count(*) FROM dm_message WHERE owner = $1", bob.login())).isEqualTo(20);
    assertThat(sql3.count(UNSYNCED_OF, bob.login()))
        .as("s4's ACKs recorded on s3 that s4 has them").isZero();
    assertThat(sql4.count(UNSYNCED_OF, bob.login()))
        .as("s4 found them stored and marked its own synced").isZero();
  }

  @Test
  @DisplayName("a copy both recipient servers got by delivery is offered by the first in serverLogin order only: the"
      + " other holds its rows for two sync periods, so the copy never crosses both ways (issue 18)")
  void copyOfBothIsOfferedByTheFirstServerOnly(Vertx vertx) {
    // s4 (after s3 in order) pulls on start only: its held rows wait 20 minutes for a pull that does not come
    BothHold both = twentyCopiesOnBoth("s4");
    TestServer s3 = both.s3();
    TestServer s4 = both.s4();
    TestUser bob = both.bob();
    Sql sql3 = world.sql(s3);
    Sql sql4 = world.sql(s4);

    // WHEN s3 has pulled from s4 twice since (a setting written on s4 reaches s3, in the run's settings pages)
    TestUser probe = world.user(TestWorld.unique("probe"), s3, s4);
    ShineClient onS4 = world.session(probe, s4);
    ShineClient onS3 = world.session(probe, s3);
    for (int round = 0; round < 3; round++) {
      String value = TestWorld.unique("round");
      onS4.request("SetUserSetting", ShineClient.object().put("key", "probe").put("value", value)).await();
      Eventually.until("a setting written on s4 reaches s3", 30_000,
          () -> value.equals(onS3.allSettings().await().path("probe").asText(null)));
    }

    // THEN s4 offered s3 nothing (its rows wait, held), and s3 offers its own at once
    long now = System.currentTimeMillis();
    assertThat(sql4.count("SELECT count(*) FROM sync_queue WHERE owner = $1 AND sibling = 's3'"
        + " AND visible_at_ms > $2", bob.login(), now)).isEqualTo(20);
    assertThat(sql3.count("SELECT count(*) FROM sync_queue WHERE owner = $1 AND sibling = 's4'"
        + " AND visible_at_ms = 0", bob.login())).isEqualTo(20);
    assertThat(sql3.count("SELECT count(*) FROM dm_message m WHERE m.owner = $1 AND NOT EXISTS (SELECT 1"
        + " FROM sync_queue q WHERE q.owner = m.owner AND q.item_key = m.base_key)", bob.login()))
        .as("s3 did not pull s4's copies (it would have taken its own off the queue)").isZero();
  }

  /** s3 and s4, bob's servers, each holding the 20 copies alice sent bob from s1. */
  private record BothHold(TestServer s3, TestServer s4, TestUser bob) {
  }

  /**
   * s1, s3 and s4 up; alice (on s1) sends bob (on s3 and s4) 20 messages, each delivered, and both of bob's servers
   * hold the 20 copies. {@code slowPuller} (s3 or s4) pulls its sibling on start only.
   */
  private BothHold twentyCopiesOnBoth(String slowPuller) {
    world.sites("s1", "s3", "s4");
    TestServer s1 = world.server("s1");
    ObjectNode slow = TestServer.merge(TestServer.json(FAST), TestServer.json("{\"sync\":{\"periodMs\":600000}}"));
    TestServer s3 = slowPuller.equals("s3") ? world.server("s3", slow) : world.server("s3");
    TestServer s4 = slowPuller.equals("s4") ? world.server("s4", slow) : world.server("s4");
    world.awaitSessions(s1, s3, s4);
    TestUser alice = world.user("alice", TestWorld.routes(s1), s1, s3, s4);
    TestUser bob = world.user("bob", TestWorld.routes(s3, s4), s1, s3, s4);
    ShineClient session = world.session(alice, s1);
    for (int i = 0; i < 20; i++) {
      assertThat(session.sendPair(alice.pairTo(bob, "to both " + i)).await().path("deliveryState").asText())
          .isEqualTo("delivered");
    }
    Sql sql3 = world.sql(s3);
    Sql sql4 = world.sql(s4);
    Eventually.until("s3 and s4 hold bob's 20 copies", 30_000,
        () -> sql3.count("SELECT count(*) FROM dm_message WHERE owner = $1", bob.login()) == 20
            && sql4.count("SELECT count(*) FROM dm_message WHERE owner = $1", bob.login()) == 20);
    return new BothHold(s3, s4, bob);
  }

  @Test
  @DisplayName("a copy the first recipient server missed reaches it from the other once the hold ends")
  void copyTheFirstServerMissedComesAfterTheHold(Vertx vertx) {
    world.sites("s1", "s3", "s4");
    TestServer s1 = world.server("s1");
    TestServer s3 = world.server("s3");
    TestServer s4 = world.server("s4");
    world.awaitSessions(s1, s3, s4);
    TestUser alice = world.user("alice", TestWorld.routes(s1), s1, s3, s4);
    TestUser bob = world.user("bob", TestWorld.routes(s3, s4), s1, s3, s4);
    // GIVEN s3 is down while alice sends: only s4 gets the copies, and holds its rows
    s3.close();
    ShineClient session = world.session(alice, s1);
    for (int i = 0; i < 5; i++) {
      assertThat(session.sendPair(alice.pairTo(bob, "while s3 is out " + i)).await().path("deliveryState").asText())
          .isEqualTo("delivered");
    }
    Sql sql4 = world.sql(s4);
    assertThat(sql4.count("SELECT count(*) FROM sync_queue WHERE owner = $1 AND sibling = 's3'"
        + " AND visible_at_ms > 0", bob.login())).isEqualTo(5);

    // WHEN s3 returns
    TestServer back = world.restart(s3);

    // THEN it gets them from s4 after the hold, and nothing is owed either way
    Sql sql3 = world.sql(back);
    Eventually.until("s3 holds bob's 5 copies", 30_000,
        () -> sql3.count("SELECT count(*) FROM dm_message WHERE owner = $1", bob.login()) == 5);
    Eventually.until("neither owes the other bob's copies", 30_000,
        () -> sql3.count("SELECT count(*) FROM sync_queue WHERE owner = $1", bob.login()) == 0
            && sql4.count("SELECT count(*) FROM sync_queue WHERE owner = $1", bob.login()) == 0);
  }

  @Test
  @DisplayName("a page whose ACK is lost comes again, and the source flips items only on ACK")
  void lostAckRedelivers(Vertx vertx) {
    StubPeer s2 = world.stub().named("s2");
    TestServer s1 = world.server("s1", TestServer.peersAt("s2", s2.url()));
    TestUser alice = TestUser.create("alice");
    TestUser bob = TestUser.create("bob");
    alice.publish(vertx, List.of(Map.entry("s1", s1.url()), Map.entry("s2", s2.url())), 1, s1.url());
    bob.publish(vertx, List.of(Map.entry("s1", s1.url())), 1, s1.url());
    ShineClient session = world.session(alice, s1);
    for (int i = 0; i < 5; i++) {
      session.sendPair(alice.pairTo(bob, "page item " + i)).await();
    }
    ShineClient sibling = s2.sessionOn(vertx, s1.url());

    JsonNode first = batch(sibling, "DmSyncBatch", "s2", List.of(), 3);
    JsonNode again = batch(sibling, "DmSyncBatch", "s2", List.of(), 3);
    List<Long> firstIds = ids(first);
    JsonNode next = batch(sibling, "DmSyncBatch", "s2", firstIds, 3);
    JsonNode last = batch(sibling, "DmSyncBatch", "s2", ids(next), 3);

    assertThat(firstIds).hasSize(3);
    assertThat(first.get("hasMore").asBoolean()).isTrue();
    assertThat(ids(again)).isEqualTo(firstIds);
    assertThat(ids(next)).hasSize(2).doesNotContainAnyElementsOf(firstIds);
    assertThat(next.get("hasMore").asBoolean()).isFalse();
    assertThat(last.get("items")).isEmpty();
    JsonNode item = first.get("items").get(0);
    assertThat(item.get("owner").asText()).isEqualTo(alice.login());
    assertThat(item.get("type").asText()).isEqualTo("pair");
    assertThat(item.get("blobsB64")).hasSize(2);
    // bob is not shared with s2: his incoming copies never appear in s2's pages
    assertThat(first.get("items")).allSatisfy(i -> assertThat(i.get("owner").asText()).isEqualTo(alice.login()));
  }

  @Test
  @DisplayName("one pull: every settings page before the first DM page; a garbage container and a forged one are"
      + " ACKed and quarantined (PROTOCOL §8 v3), not stored")
  void settingsFirstAndBadItemsRejected(Vertx vertx) {
    StubPeer source = world.stub();
    TestServer s2 = world.server("s2");
    TestUser alice = TestUser.create("alice");
    TestUser bob = TestUser.create("bob");
    alice.publish(vertx, List.of(Map.entry(source.serverLogin(), source.url()), Map.entry("s2", s2.url())), 1,
        s2.url());
    bob.publish(vertx, List.of(Map.entry("s2", s2.url())), 1, s2.url());
    SignedPair good1 = alice.pairTo(bob, "good one");
    SignedPair good2 = alice.pairTo(bob, "good two");
    SignedPair forged = ShineClient.signPair(alice.login(), TestUser.create("mallory").key(), bob.login(),
        System.currentTimeMillis(), ShineClient.randomNonce(), 0, "forged".getBytes(StandardCharsets.UTF_8));
    List<String> order = new CopyOnWriteArrayList<>();
    List<JsonNode> dmAcks = new CopyOnWriteArrayList<>();
    AtomicInteger settingsPages = new AtomicInteger();
    source.respond("UserSettingsSyncBatch", (op, p) -> {
      order.add(op);
      ObjectNode page = Json.MAPPER.createObjectNode();
      ArrayNode items = page.putArray("items");
      int n = settingsPages.incrementAndGet();
      if (n <= 2) {
        items.addObject().put("syncId", n).put("owner", alice.login()).put("key", "theme" + n)
            .put("updatedAtMs", 1000 + n).put("value", "dark");
      }
      return page.put("hasMore", n < 2);
    });
    source.respond("DmSyncBatch", (op, p) -> {
      order.add(op);
      dmAcks.add(p.get("ackSyncIds"));
      ObjectNode page = Json.MAPPER.createObjectNode();
      ArrayNode items = page.putArray("items");
      if (dmAcks.size() == 1) {
        addPair(items, 11, alice, good1);
        items.addObject().put("syncId", 12).put("owner", alice.login()).put("type", "pair").putArray("blobsB64")
            .add(Base64.getEncoder().encodeToString("garbage".getBytes(StandardCharsets.UTF_8)))
            .add(Base64.getEncoder().encodeToString(good2.outgoing().bytes()));
        addPair(items, 13, alice, forged);
        addPair(items, 14, alice, good2);
      }
      return page.put("hasMore", false);
    });
    source.respond("GetDmDeliveryStatus", (op, p) -> Json.MAPPER.createObjectNode().put("known", true)
        .put("delivered", true));

    Eventually.until("the DM page is stored and its ACK sent", 10_000, () -> dmAcks.size() >= 2);

    // a snapshot: later pulls keep adding to the list
    List<String> seen = List.copyOf(order);
    int firstDm = seen.indexOf("DmSyncBatch");
    assertThat(seen.subList(0, firstDm)).containsOnly("UserSettingsSyncBatch").hasSizeGreaterThanOrEqualTo(2);
    List<Long> acked = new ArrayList<>();
    dmAcks.get(1).forEach(id -> acked.add(id.asLong()));
    assertThat(acked).containsExactlyInAnyOrder(11L, 12L, 13L, 14L);
    Sql sql = world.sql(s2);
    assertThat(sql.count("SELECT count(*) FROM dm_message WHERE owner = $1", alice.login())).isEqualTo(2);
    assertThat(sql.count("SELECT count(*) FROM sync_quarantine WHERE source_sync_id = 12 AND reason = 'malformed'"))
        .isEqualTo(1);
    assertThat(sql.count("SELECT count(*) FROM sync_quarantine WHERE source_sync_id = 13"
        + " AND reason = 'bad_signature'")).isEqualTo(1);
    assertThat(sql.count("SELECT count(*) FROM user_setting WHERE owner = $1", alice.login())).isEqualTo(2);
  }

  @Test
  @DisplayName("MarkAllUserSettingsUnsynced re-syncs the whole history and sends no old message again")
  void markAllUnsyncedResyncsWithoutResending(Vertx vertx) {
    StubPeer recipient = world.stub().acceptEverything();
    world.sites("s1", "s2");
    TestServer s1 = world.server("s1");
    TestServer s2 = world.server("s2");
    TestUser alice = TestUser.create("alice");
    TestUser bob = TestUser.create("bob");
    alice.publish(vertx, List.of(Map.entry("s1", s1.url()), Map.entry("s2", s2.url())), 1, s1.url(), s2.url());
    bob.publish(vertx, List.of(Map.entry(recipient.serverLogin(), recipient.url())), 1, s1.url(), s2.url());
    ShineClient session = world.session(alice, s1);
    session.request("SetUserSetting", ShineClient.object().put("key", "lang").put("value", "eo")).await();
    for (int i = 0; i < 10; i++) {
      session.sendPair(alice.pairTo(bob, "history " + i)).await();
    }
    Sql sql1 = world.sql(s1);
    Sql sql2 = world.sql(s2);
    Eventually.until("s2 has the history and the setting", 10_000,
        () -> sql2.count("SELECT count(*) FROM dm_message WHERE owner = $1", alice.login()) == 10
            && sql1.count(UNSYNCED_OF, alice.login()) == 0);
    // s2 makes its own first attempt of each forwarded pair: count the calls once both servers are done
    String delivered = "SELECT count(*) FROM dm_delivery WHERE owner = $1 AND state = 'delivered'";
    Eventually.until("both of alice's servers have delivered all ten", 10_000,
        () -> sql1.count(delivered, alice.login()) == 10 && sql2.count(delivered, alice.login()) == 10);
    long callsBefore = recipient.count(RECEIVE);

    JsonNode reset = session.request("MarkAllUserSettingsUnsynced", ShineClient.object()).await();

    assertThat(reset.get("reset").asInt()).isEqualTo(11);
    Eventually.until("the whole history flowed again", 10_000,
        () -> sql1.count(UNSYNCED_OF, alice.login()) == 0);
    // nothing is sent again: s1 and s2 pull from each other twice more
    world.awaitSyncRounds(s1, s2, 2);
    assertThat(recipient.count(RECEIVE)).isEqualTo(callsBefore);
    assertThat(sql2.count("SELECT count(*) FROM dm_message WHERE owner = $1", alice.login())).isEqualTo(10);
    JsonNode settings = world.session(alice, s2).request("GetUserSettings", ShineClient.object()).await();
    assertThat(settings.at("/settings/lang").asText()).isEqualTo("eo");
  }

  @Test
  @DisplayName("an old pair arriving by sync takes delivered or failed from the source, with no send")
  void oldPairsTakeTheSourcesState(Vertx vertx) {
    String u2 = world.url("s2");
    StubPeer live = world.stub().acceptEverything();
    StubPeer dead = world.stub()
        .respond(RECEIVE, (op, p) -> new StubPeer.Error(503, "STORAGE_UNAVAILABLE", "down"));
    TestServer s1 = world.server("s1");
    TestUser alice = TestUser.create("alice");
    TestUser bob = TestUser.create("bob");
    TestUser carol = TestUser.create("carol");
    alice.publish(vertx, List.of(Map.entry("s1", s1.url()), Map.entry("s2", u2)), 1, s1.url());
    bob.publish(vertx, List.of(Map.entry(live.serverLogin(), live.url())), 1, s1.url());
    carol.publish(vertx, List.of(Map.entry(dead.serverLogin(), dead.url())), 1, s1.url());
    ShineClient session = world.session(alice, s1);
    SignedPair toBob = alice.pairTo(bob, "will be delivered");
    SignedPair toCarol = alice.pairTo(carol, "will fail");
    session.sendPair(toBob).await();
    session.sendPair(toCarol).await();
    Sql sql1 = world.sql(s1);
    Eventually.until("carol's fails on s1", 6_000, () -> "failed".equals(sql1.state(toCarol)));
    long liveCalls = live.count(RECEIVE);
    long deadCalls = dead.count(RECEIVE);

    // WHEN alice's second server starts only now, after the last schedule point of both
    TestServer s2 = world.server("s2");
    alice.publish(vertx, List.of(Map.entry("s1", s1.url()), Map.entry("s2", u2)), 1, s2.url());
    bob.publish(vertx, List.of(Map.entry(live.serverLogin(), live.url())), 1, s2.url());
    carol.publish(vertx, List.of(Map.entry(dead.serverLogin(), dead.url())), 1, s2.url());

    Sql sql2 = world.sql(s2);
    Eventually.until("s2 has both with their final states", 10_000,
        () -> "delivered".equals(sql2.state(toBob)) && "failed".equals(sql2.state(toCarol)));
    // and sends nothing for them: s1 and s2 pull from each other twice more
    world.awaitSyncRounds(s1, s2, 2);
    assertThat(live.count(RECEIVE)).isEqualTo(liveCalls);
    assertThat(dead.count(RECEIVE)).isEqualTo(deadCalls);
    assertThat(s2.serverLogin()).isEqualTo("s2");
  }

  @Test
  @DisplayName("an old pair whose source is still trying joins the last schedule point here and is never failed;"
      + " an old peer without state is read as before")
  void sourceStillTryingJoinsTheLastPoint(Vertx vertx) {
    // GIVEN alice's first server (a stub) still trying an old pair, and bob's only server refusing everything
    StubPeer source = world.stub();
    StubPeer dead = world.stub()
        .respond(RECEIVE, (op, p) -> new StubPeer.Error(503, "STORAGE_UNAVAILABLE", "down"));
    TestServer s2 = world.server("s2", LONG_LAST_POINT);
    TestUser alice = TestUser.create("alice");
    TestUser bob = TestUser.create("bob");
    alice.publish(vertx, List.of(Map.entry(source.serverLogin(), source.url()), Map.entry("s2", s2.url())), 1,
        s2.url());
    bob.publish(vertx, List.of(Map.entry(dead.serverLogin(), dead.url())), 1, s2.url());
    long createdAt = System.currentTimeMillis() - 20_000;
    SignedPair trying = aged(alice, bob, createdAt, "the source is still trying");
    SignedPair legacy = aged(alice, bob, createdAt, "an old source says not delivered");
    AtomicBoolean sourceDelivered = new AtomicBoolean();
    source.respond("GetDmDeliveryStatus", (op, p) -> {
      boolean legacyKey = p.get("messageKey").asText().equals(legacy.outgoing().messageKey());
      ObjectNode status = Json.MAPPER.createObjectNode().put("messageKey", p.get("messageKey").asText())
          .put("known", true).put("delivered", !legacyKey && sourceDelivered.get());
      // the old peer answers without state; the v2 one tells "still trying" from "failed"
      return legacyKey ? status : status.put("state", sourceDelivered.get() ? "delivered" : "accepted");
    });
    serveOnce(source, List.of(Map.entry(21L, trying), Map.entry(22L, legacy)), alice);

    // WHEN s2 pulls both
    Sql sql = world.sql(s2);
    Eventually.until("s2 stores both pairs", 10_000, () -> sql.state(trying) != null && sql.state(legacy) != null);

    // THEN the one still in flight at the source waits for the last point, the old peer's answer is final
    var row = sql.rows("SELECT state, attempts, next_attempt_at_ms FROM dm_delivery WHERE base_key = $1",
        trying.outgoing().baseKey()).iterator().next();
    assertThat(row.getString("state")).isEqualTo("accepted");
    assertThat(row.getInteger("attempts")).isEqualTo(4);
    assertThat(row.getLong("next_attempt_at_ms")).isGreaterThan(System.currentTimeMillis());
    assertThat(sql.state(legacy)).isEqualTo("failed");

    // AND when the source has delivered it by then, the last point takes that from the source without a send
    sourceDelivered.set(true);
    Eventually.until("the last point asks the source and finds it delivered", 15_000,
        () -> "delivered".equals(sql.state(trying)));
    assertThat(dead.count(RECEIVE)).isZero();
  }

  @Test
  @DisplayName("a newer revision arriving by sync while the stored one is still accepted gets a row of its own")
  void newerRevisionBySyncWhileAccepted(Vertx vertx) {
    // GIVEN s2 holds revision 0 of a pair, still accepted (young when it came; no worker tick since)
    StubPeer source = world.stub();
    StubPeer dead = world.stub()
        .respond(RECEIVE, (op, p) -> new StubPeer.Error(503, "STORAGE_UNAVAILABLE", "down"));
    TestServer s2 = world.server("s2", NO_WORKER_TICKS);
    TestUser alice = TestUser.create("alice");
    TestUser bob = TestUser.create("bob");
    alice.publish(vertx, List.of(Map.entry(source.serverLogin(), source.url()), Map.entry("s2", s2.url())), 1,
        s2.url());
    bob.publish(vertx, List.of(Map.entry(dead.serverLogin(), dead.url())), 1, s2.url());
    long createdAt = System.currentTimeMillis() - 1_000;
    long nonce = ShineClient.randomNonce();
    SignedPair first = ShineClient.signPair(alice.login(), alice.key(), bob.login(), createdAt, nonce, 0,
        "first words".getBytes(StandardCharsets.UTF_8));
    SignedPair edited = ShineClient.signPair(alice.login(), alice.key(), bob.login(), createdAt, nonce, 1,
        "second thoughts".getBytes(StandardCharsets.UTF_8));
    // the source is still trying revision 0 when it comes, so s2 joins the schedule
    source.respond("GetDmDeliveryStatus", (op, p) -> Json.MAPPER.createObjectNode()
        .put("messageKey", p.get("messageKey").asText()).put("known", true).put("delivered", false)
        .put("state", "accepted"));
    List<JsonNode> acks = serveOnce(source, List.of(Map.entry(31L, first)), alice);
    Sql sql = world.sql(s2);
    Eventually.until("revision 0 is stored", 10_000, () -> sql.state(first) != null);
    assertThat(sql.state(first)).isEqualTo("accepted");
    source.respond("GetDmDeliveryStatus", (op, p) -> Json.MAPPER.createObjectNode()
        .put("messageKey", p.get("messageKey").asText()).put("known", true).put("delivered", true)
        .put("state", "delivered"));

    // WHEN the edit arrives by sync once the last schedule point has passed
    Eventually.until("the pair is older than the last schedule point", 5_000,
        () -> System.currentTimeMillis() > createdAt + 3_100);
    serveOnce(source, List.of(Map.entry(32L, edited)), alice, acks);

    // THEN it is stored and ACKed, with a delivery row of its own as the source says, and no 500
    Eventually.until("the edit is ACKed", 10_000, () -> acks.stream().anyMatch(a -> a.toString().contains("32")));
    List<String> states = new ArrayList<>();
    sql.rows("SELECT revision, state FROM dm_delivery WHERE base_key = $1 ORDER BY revision",
        first.outgoing().baseKey()).forEach(r -> states.add(r.getLong("revision") + ":" + r.getString("state")));
    assertThat(states).containsExactly("0:accepted", "1:delivered");
    assertThat(sql.count("SELECT max(revision) FROM dm_message WHERE owner = $1", alice.login())).isEqualTo(1);
  }

  @Test
  @DisplayName("when the connection drops before the ACK, the page comes again and is stored once")
  void droppedAckPageStoredOnce(Vertx vertx) {
    StubPeer source = world.stub();
    TestServer s2 = world.server("s2");
    TestUser alice = TestUser.create("alice");
    TestUser bob = TestUser.create("bob");
    alice.publish(vertx, List.of(Map.entry(source.serverLogin(), source.url()), Map.entry("s2", s2.url())), 1,
        s2.url());
    bob.publish(vertx, List.of(Map.entry("s2", s2.url())), 1, s2.url());
    SignedPair pair = alice.pairTo(bob, "say it twice");
    List<JsonNode> requests = new CopyOnWriteArrayList<>();
    AtomicInteger dropped = new AtomicInteger();
    source.respond("UserSettingsSyncBatch", (op, p) -> Json.MAPPER.createObjectNode().put("hasMore", false)
        .set("items", Json.MAPPER.createArrayNode()));
    source.respond("GetDmDeliveryStatus", (op, p) -> Json.MAPPER.createObjectNode().put("known", true)
        .put("delivered", true));
    source.respond("DmSyncBatch", (op, p) -> {
      requests.add(p);
      boolean acks = p.get("ackSyncIds").size() > 0;
      if (acks && dropped.getAndIncrement() == 0) {
        // the first ACK is lost: the connection drops before it is answered
        source.dropConnections();
        return io.vertx.core.Promise.promise().future();
      }
      ObjectNode page = Json.MAPPER.createObjectNode().put("hasMore", false);
      ArrayNode items = page.putArray("items");
      if (!acks && dropped.get() <= 1) {
        addPair(items, 7, alice, pair);
      }
      return page;
    });

    Eventually.until("the page is acknowledged after the drop", 10_000, () -> dropped.get() >= 2);

    Sql sql = world.sql(s2);
    assertThat(requests.stream().filter(r -> r.get("ackSyncIds").size() > 0).count()).isGreaterThanOrEqualTo(2);
    assertThat(requests.stream().filter(r -> r.get("ackSyncIds").size() > 0)
        .allMatch(r -> r.get("ackSyncIds").get(0).asLong() == 7)).isTrue();
    assertThat(sql.count("SELECT count(*) FROM dm_message WHERE owner = $1", alice.login())).isEqualTo(1);
    assertThat(sql.count("SELECT count(*) FROM sync_queue WHERE owner = $1", alice.login()))
        .as("the pair came from the sibling: nobody is owed it").isZero();
  }

  @Test
  @DisplayName("settings: the later write wins on both servers, and the sibling's copy is not sent back")
  void settingsLastWriterWins(Vertx vertx) {
    world.sites("s1", "s2");
    TestServer s1 = world.server("s1");
    TestServer s2 = world.server("s2");
    TestUser alice = TestUser.create("alice");
    alice.publish(vertx, List.of(Map.entry("s1", s1.url()), Map.entry("s2", s2.url())), 1, s1.url(), s2.url());
    ShineClient onS1 = world.session(alice, s1);
    ShineClient onS2 = world.session(alice, s2);

    onS1.request("SetUserSetting", ShineClient.object().put("key", "theme").put("value", "light")).await();
    Eventually.until("s2 learns the first value", 5_000, () -> "light".equals(setting(onS2, "theme")));
    onS2.request("SetUserSetting", ShineClient.object().put("key", "theme").set("value",
        Json.MAPPER.createObjectNode().put("mode", "dark").put("contrast", 2))).await();

    Eventually.until("s1 takes the later value", 5_000, () -> !(setting(onS1, "theme") instanceof String));
    JsonNode onBoth = onS1.request("GetUserSettings", ShineClient.object()).await().at("/settings/theme");
    assertThat(onBoth.get("mode").asText()).isEqualTo("dark");
    assertThat(onS2.request("GetUserSettings", ShineClient.object()).await().at("/settings/theme"))
        .isEqualTo(onBoth);
    Sql sql1 = world.sql(s1);
    Sql sql2 = world.sql(s2);
    Eventually.until("nothing left to sync either way", 5_000,
        () -> sql1.count(UNSYNCED_OF, alice.login()) == 0
            && sql2.count(UNSYNCED_OF, alice.login()) == 0);
  }

  @Test
  @DisplayName("a user who moves her second server gets there what the old one had not ACKed, and the old one is"
      + " owed nothing more")
  void newSiblingGetsWhatTheOldOneLacked(Vertx vertx) {
    world.sites("s1", "s2", "s3");
    TestServer s1 = world.server("s1");
    TestServer s2 = world.server("s2");
    TestServer s3 = world.server("s3");
    TestUser alice = TestUser.create("alice");
    alice.publish(vertx, List.of(Map.entry("s1", s1.url()), Map.entry("s2", s2.url())), 1, s1.url(), s2.url());
    TestUser bob = world.user("bob", s1);
    ShineClient session = world.session(alice, s1);
    // GIVEN a message s2 has, then three s1 still owes s2 because s2 is down
    session.sendPair(alice.pairTo(bob, "before")).await();
    Sql sql1 = world.sql(s1);
    Eventually.until("s2 has the first message and nothing is owed to it", 10_000,
        () -> sql1.count("SELECT count(*) FROM sync_queue WHERE owner = $1", alice.login()) == 0);
    s2.close();
    for (int i = 0; i < 3; i++) {
      session.sendPair(alice.pairTo(bob, "while s2 is down " + i)).await();
    }
    assertThat(sql1.count("SELECT count(*) FROM sync_queue WHERE owner = $1 AND sibling = 's2'", alice.login()))
        .isEqualTo(3);

    // WHEN alice replaces s2 by s3
    alice.publish(vertx, List.of(Map.entry("s1", s1.url()), Map.entry("s3", s3.url())), 2, s1.url(), s3.url());

    // THEN s3 pulls the three (not the first, which a sibling had already), and s1 owes s2 nothing
    Sql sql3 = world.sql(s3);
    Eventually.until("s3 holds the three messages s2 lacked", 20_000,
        () -> sql3.count("SELECT count(*) FROM dm_message WHERE owner = $1", alice.login()) == 3);
    Eventually.until("s1 owes nothing to anyone", 10_000,
        () -> sql1.count("SELECT count(*) FROM sync_queue WHERE owner = $1", alice.login()) == 0);
    world.awaitSyncRounds(s1, s3, 1);
    assertThat(sql3.count("SELECT count(*) FROM dm_message WHERE owner = $1", alice.login())).isEqualTo(3);
  }

  private static Object setting(ShineClient session, String key) {
    JsonNode value = session.request("GetUserSettings", ShineClient.object()).await().path("settings").get(key);
    return value == null ? null : value.isTextual() ? value.asText() : value;
  }

  // ---- helpers

  private static SignedPair aged(TestUser from, TestUser to, long createdAtMs, String text) {
    return ShineClient.signPair(from.login(), from.key(), to.login(), createdAtMs, ShineClient.randomNonce(), 0,
        text.getBytes(StandardCharsets.UTF_8));
  }

  /** The source serves these items on every page until each is ACKed; answers the ACK lists it got. */
  private static List<JsonNode> serveOnce(StubPeer source, List<Map.Entry<Long, SignedPair>> items, TestUser owner) {
    return serveOnce(source, items, owner, new CopyOnWriteArrayList<>());
  }

  private static List<JsonNode> serveOnce(StubPeer source, List<Map.Entry<Long, SignedPair>> items, TestUser owner,
      List<JsonNode> acks) {
    Map<Long, SignedPair> pending = new ConcurrentHashMap<>();
    items.forEach(e -> pending.put(e.getKey(), e.getValue()));
    source.respond("UserSettingsSyncBatch", (op, p) -> Json.MAPPER.createObjectNode().put("hasMore", false)
        .set("items", Json.MAPPER.createArrayNode()));
    source.respond("DmSyncBatch", (op, p) -> {
      acks.add(p.get("ackSyncIds"));
      p.get("ackSyncIds").forEach(id -> pending.remove(id.asLong()));
      ObjectNode page = Json.MAPPER.createObjectNode().put("hasMore", false);
      ArrayNode out = page.putArray("items");
      if (p.get("limit").asInt() > 0) {
        pending.forEach((syncId, pair) -> addPair(out, syncId, owner, pair));
      }
      return page;
    });
    return acks;
  }

  private static void addPair(ArrayNode items, long syncId, TestUser owner, SignedPair pair) {
    items.addObject().put("syncId", syncId).put("owner", owner.login()).put("type", "pair").putArray("blobsB64")
        .add(Base64.getEncoder().encodeToString(pair.incoming().bytes()))
        .add(Base64.getEncoder().encodeToString(pair.outgoing().bytes()));
  }

  private static JsonNode batch(ShineClient client, String op, String puller, List<Long> acks, int limit) {
    ObjectNode payload = ShineClient.object().put("sourceServerLogin", puller).put("limit", limit);
    ArrayNode ids = payload.putArray("ackSyncIds");
    acks.forEach(ids::add);
    return client.request(op, payload).await();
  }

  private static List<Long> ids(JsonNode page) {
    List<Long> ids = new ArrayList<>();
    page.get("items").forEach(item -> ids.add(item.get("syncId").asLong()));
    return ids;
  }
}
