package org.shine.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Row;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.support.Eventually;
import org.shine.server.support.Sql;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/** The parts under delivery: backpressure, peer connections, card relay, and the due-row query plan. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class DeliveryMachineryIT {
  private static final String RECEIVE = "ReceiveIncomingMessage";
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
  @DisplayName("with the attempt queue full a send is still 200 accepted, and the retry worker delivers it")
  void overflowGoesToTheRetryWorker() {
    StubPeer slow = world.stub();
    List<Promise<Object>> held = new ArrayList<>();
    slow.respond(RECEIVE, (op, p) -> {
      Promise<Object> answer = Promise.promise();
      synchronized (held) {
        held.add(answer);
      }
      return answer.future();
    });
    TestServer server = world.server("s1", "{\"delivery\":{\"scheduleMs\":[0,300,600,900,1200],"
        + "\"workerPeriodMs\":50,\"callTimeoutMs\":5000,\"leaseMs\":3000,\"maxInFlight\":1,\"queueCapacity\":0}}");
    TestUser alice = world.user("alice", server);
    TestUser bob = world.user("bob", List.of(Map.entry(slow.serverLogin(), slow.url())), server);
    ShineClient session = world.session(alice, server);

    // GIVEN one attempt in flight that the recipient does not answer yet, filling the single slot
    Future<JsonNode> first = session.sendPair(alice.pairTo(bob, "first"));
    Eventually.until("the first call arrives", 5_000, () -> slow.count(RECEIVE) == 1);
    // WHEN more sends arrive while no slot and no queue place is free
    List<JsonNode> more = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      more.add(session.sendPair(alice.pairTo(bob, "overflow " + i)).await());
    }
    // THEN they are answered at once as accepted, and delivered later by the worker
    assertThat(more).allSatisfy(r -> assertThat(r.get("deliveryState").asText()).isEqualTo("accepted"));
    assertThat(first.isComplete()).isFalse();
    slow.respond(RECEIVE, (op, p) -> Json.MAPPER.createObjectNode());
    synchronized (held) {
      held.forEach(h -> h.complete(Json.MAPPER.createObjectNode()));
    }
    assertThat(first.await().get("deliveryState").asText()).isEqualTo("delivered");
    Sql sql = world.sql(server);
    Eventually.until("all six delivered", 10_000,
        () -> sql.count("SELECT count(*) FROM dm_delivery WHERE state = 'delivered'") == 6);
  }

  @Test
  @DisplayName("a peer connection that drops fails its in-flight calls at once, not at the call timeout")
  void droppedConnectionFailsCallsAtOnce() {
    StubPeer silent = world.stub().respond(RECEIVE, (op, p) -> Promise.promise().future());
    TestServer server = world.server("s1", "{\"delivery\":{\"callTimeoutMs\":20000,\"workerPeriodMs\":60000}}");
    TestUser alice = world.user("alice", server);
    TestUser bob = world.user("bob", List.of(Map.entry(silent.serverLogin(), silent.url())), server);
    ShineClient session = world.session(alice, server);
    Future<JsonNode> send = session.sendPair(alice.pairTo(bob, "hello?"));
    Eventually.until("the call is in flight", 5_000, () -> silent.count(RECEIVE) == 1);
    long dropped = System.currentTimeMillis();

    silent.dropConnections();

    JsonNode result = send.await();
    assertThat(System.currentTimeMillis() - dropped).isLessThan(5_000);
    assertThat(result.get("deliveryState").asText()).isEqualTo("accepted");
  }

  @Test
  @DisplayName("a configured peer that starts later is connected by backoff, and calls reach it")
  void reconnectsToAConfiguredPeer(Vertx vertx) {
    String peerUrl = world.url("s2");
    TestServer server = world.server("s1", TestServer.peersAt("s2", peerUrl));
    List<String> connected = new java.util.concurrent.CopyOnWriteArrayList<>();
    server.vertx().eventBus().<String>consumer("peer.connected", m -> connected.add(m.body()));
    StubPeer late = world.keep(StubPeer.start(vertx, world.port("s2"))).named("s2").acceptEverything();
    Eventually.until("the server connects to the late peer", 10_000, () -> connected.contains(peerUrl));
    world.user("alice", server);
    Eventually.until("the card is relayed to the configured peer", 5_000, () -> late.count("PublishUserCard") == 1);
  }

  @Test
  @DisplayName("an accepted newer card is relayed to configured peers and to its servers, and relays end")
  void cardRelay(Vertx vertx) {
    String u1 = world.url("s1");
    String u2 = world.url("s2");
    TestServer s1 = world.server("s1", TestServer.peersAt("s2", u2));
    TestServer s2 = world.server("s2", TestServer.peersAt("s1", u1));
    TestUser alice = TestUser.create("alice");
    alice.publish(vertx, List.of(Map.entry("s1", u1)), 1, s1.url());
    ShineClient onS2 = world.anonymous(s2);
    Eventually.until("s2 learns alice's card", 5_000, () -> version(onS2, "alice") == 1);

    alice.publish(vertx, List.of(Map.entry("s1", u1)), 2, s1.url());

    Eventually.until("s2 learns version 2", 5_000, () -> version(onS2, "alice") == 2);
    for (TestServer server : List.of(s1, s2)) {
      assertThat(world.sql(server).count("SELECT version FROM user_card WHERE login = 'alice'")).isEqualTo(2);
    }
  }

  @Test
  @DisplayName("a configured peer that was down while a card changed gets the card when it comes back")
  void cardsReannouncedOnReconnect() {
    TestServer s1 = world.server("s1", TestServer.peersAt("s2", world.url("s2")));
    // GIVEN s2 is down while alice (served by s1) publishes her card
    world.user("alice", s1);

    // WHEN s2 starts, and s1's peer connection to it comes up
    TestServer s2 = world.server("s2");
    ShineClient onS2 = world.anonymous(s2);

    // THEN s2 learns the card without anyone publishing it again
    Eventually.until("s2 learns alice's card", 15_000, () -> version(onS2, "alice") == 1);
  }

  @Test
  @DisplayName("the retry worker's due-row query reads the partial index, not the table")
  void dueRowsComeFromThePartialIndex() {
    Sql sql = world.sql(world.server("s1"));
    // GIVEN many terminal rows and a few due ones
    sql.rows("INSERT INTO dm_delivery (base_key, revision, owner, state, accepted_at_ms, attempts,"
        + " next_attempt_at_ms, updated_at_ms) SELECT 'k' || g, 0, 'alice', CASE WHEN g % 2 = 0 THEN 'delivered'"
        + " ELSE 'failed' END, 0, 1, NULL, 0 FROM generate_series(1, 20000) g");
    sql.rows("INSERT INTO dm_delivery (base_key, revision, owner, state, accepted_at_ms, attempts,"
        + " next_attempt_at_ms, updated_at_ms) SELECT 'due' || g, 0, 'alice', 'accepted', 0, 1, g, 0"
        + " FROM generate_series(1, 20) g");
    sql.rows("ANALYZE dm_delivery");

    StringBuilder plan = new StringBuilder();
    for (Row row : sql.rows("EXPLAIN " + org.shine.server.db.DeliveryRepositoryPlans.CLAIM_DUE, 1_000L, 30_000L,
        256)) {
      plan.append(row.getString(0)).append('\n');
    }

    assertThat(plan.toString()).contains("dm_delivery_due").doesNotContain("Seq Scan on dm_delivery");
  }

  private static long version(ShineClient client, String login) {
    try {
      return client.request("GetUserCard", ShineClient.object().put("login", login)).await()
          .at("/card/version").asLong();
    } catch (ShineClientException e) {
      return -1;
    }
  }
}
