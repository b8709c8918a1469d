package org.shine.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.client.ShineClientException;
import org.shine.server.support.Eventually;
import org.shine.server.support.StubPeer;
import org.shine.server.db.Database;
import org.shine.server.support.TestDatabase;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.util.Json;

/** The parts under delivery: backpressure, peer connections, card relay, and the due-row query plan. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class DeliveryMachineryIT {
  private static final String RECEIVE = "ReceiveIncomingMessage";

  @Test
  @DisplayName("with the attempt queue full a send is still 200 accepted, and the retry worker delivers it")
  void overflowGoesToTheRetryWorker(Vertx vertx) {
    try (TestDatabase db = TestDatabase.create(vertx);
        StubPeer slow = StubPeer.start(vertx)) {
      List<Promise<Object>> held = new ArrayList<>();
      slow.respond(RECEIVE, (op, p) -> {
        Promise<Object> answer = Promise.promise();
        synchronized (held) {
          held.add(answer);
        }
        return answer.future();
      });
      TestServer server = TestServer.start("s1", db.config(), Clock.systemUTC(), "{\"delivery\":{"
          + "\"scheduleMs\":[0,300,600,900,1200],\"workerPeriodMs\":50,\"callTimeoutMs\":5000,\"leaseMs\":3000,"
          + "\"maxInFlight\":1,\"queueCapacity\":0}}");
      try (server) {
        TestUser alice = TestUser.create("alice").registerOn(vertx, server);
        TestUser bob = TestUser.create("bob").publish(vertx, List.of(Map.entry("b1", slow.url())), 1, server.url());
        ShineClient session = alice.session(vertx, server);

        // GIVEN one attempt in flight that the recipient does not answer yet, filling the single slot
        Future<JsonNode> first = session.sendPair(pair(alice, bob, "first"));
        Eventually.until("the first call arrives", 5_000, () -> slow.count(RECEIVE) == 1);
        // WHEN more sends arrive while no slot and no queue place is free
        List<JsonNode> more = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
          more.add(session.sendPair(pair(alice, bob, "overflow " + i)).await());
        }
        // THEN they are answered at once as accepted, and delivered later by the worker
        assertThat(more).allSatisfy(r -> assertThat(r.get("deliveryState").asText()).isEqualTo("accepted"));
        assertThat(first.isComplete()).isFalse();
        slow.respond(RECEIVE, (op, p) -> Json.MAPPER.createObjectNode());
        synchronized (held) {
          held.forEach(h -> h.complete(Json.MAPPER.createObjectNode()));
        }
        assertThat(first.await().get("deliveryState").asText()).isEqualTo("delivered");
        Pool sql = db.pool();
        try {
          Eventually.until("all six delivered", 10_000, () -> sql.query(
              "SELECT count(*) FROM dm_delivery WHERE state = 'delivered'").execute().await().iterator().next()
              .getLong(0) == 6);
        } finally {
          sql.close().await();
        }
      }
    }
  }

  @Test
  @DisplayName("a peer connection that drops fails its in-flight calls at once, not at the call timeout")
  void droppedConnectionFailsCallsAtOnce(Vertx vertx) {
    try (TestDatabase db = TestDatabase.create(vertx);
        StubPeer silent = StubPeer.start(vertx)) {
      silent.respond(RECEIVE, (op, p) -> Promise.promise().future());
      TestServer server = TestServer.start("s1", db.config(), Clock.systemUTC(), "{\"delivery\":{"
          + "\"callTimeoutMs\":20000,\"workerPeriodMs\":60000}}");
      try (server) {
        TestUser alice = TestUser.create("alice").registerOn(vertx, server);
        TestUser bob = TestUser.create("bob").publish(vertx, List.of(Map.entry("b1", silent.url())), 1,
            server.url());
        ShineClient session = alice.session(vertx, server);
        Future<JsonNode> send = session.sendPair(pair(alice, bob, "hello?"));
        Eventually.until("the call is in flight", 5_000, () -> silent.count(RECEIVE) == 1);
        long dropped = System.currentTimeMillis();

        silent.dropConnections();

        JsonNode result = send.await();
        assertThat(System.currentTimeMillis() - dropped).isLessThan(5_000);
        assertThat(result.get("deliveryState").asText()).isEqualTo("accepted");
      }
    }
  }

  @Test
  @DisplayName("a configured peer that starts later is connected by backoff, and calls reach it")
  void reconnectsToAConfiguredPeer(Vertx vertx) {
    int peerPort = TestServer.freePort();
    try (TestDatabase db = TestDatabase.create(vertx)) {
      String peerUrl = "ws://127.0.0.1:" + peerPort + "/ws";
      TestServer server = TestServer.start("s1", db.config(), Clock.systemUTC(),
          "{\"peers\":[{\"serverLogin\":\"s2\",\"url\":\"" + peerUrl + "\"}]}");
      try (server) {
        List<String> connected = new java.util.concurrent.CopyOnWriteArrayList<>();
        server.vertx().eventBus().<String>consumer("peer.connected", m -> connected.add(m.body()));
        try (StubPeer late = StubPeer.start(vertx, peerPort)) {
          late.acceptEverything();
          Eventually.until("the server connects to the late peer", 10_000, () -> connected.contains(peerUrl));
          TestUser.create("alice").registerOn(vertx, server);
          Eventually.until("the card is relayed to the configured peer", 5_000,
              () -> late.count("PublishUserCard") == 1);
        }
      }
    }
  }

  @Test
  @DisplayName("an accepted newer card is relayed to configured peers and to its servers, and relays end")
  void cardRelay(Vertx vertx) {
    int p1 = TestServer.freePort();
    int p2 = TestServer.freePort();
    String u1 = "ws://127.0.0.1:" + p1 + "/ws";
    String u2 = "ws://127.0.0.1:" + p2 + "/ws";
    try (TestDatabase db1 = TestDatabase.create(vertx);
        TestDatabase db2 = TestDatabase.create(vertx);
        TestServer s1 = TestServer.start("s1", db1.config(), Clock.systemUTC(),
            "{\"peers\":[{\"serverLogin\":\"s2\",\"url\":\"" + u2 + "\"}]}", p1);
        TestServer s2 = TestServer.start("s2", db2.config(), Clock.systemUTC(),
            "{\"peers\":[{\"serverLogin\":\"s1\",\"url\":\"" + u1 + "\"}]}", p2)) {
      TestUser alice = TestUser.create("alice");
      alice.publish(vertx, List.of(Map.entry("s1", u1)), 1, s1.url());
      ShineClient onS2 = ShineClient.connect(vertx, s2.url()).await();
      Eventually.until("s2 learns alice's card", 5_000, () -> version(onS2, "alice") == 1);

      alice.publish(vertx, List.of(Map.entry("s1", u1)), 2, s1.url());

      Eventually.until("s2 learns version 2", 5_000, () -> version(onS2, "alice") == 2);
      Pool sql1 = db1.pool();
      Pool sql2 = db2.pool();
      try {
        for (Pool sql : List.of(sql1, sql2)) {
          Row row = sql.query("SELECT version FROM user_card WHERE login = 'alice'").execute().await().iterator()
              .next();
          assertThat(row.getLong(0)).isEqualTo(2);
        }
      } finally {
        sql1.close().await();
        sql2.close().await();
      }
    }
  }

  @Test
  @DisplayName("a configured peer that was down while a card changed gets the card when it comes back")
  void cardsReannouncedOnReconnect(Vertx vertx) {
    int p2 = TestServer.freePort();
    String u2 = "ws://127.0.0.1:" + p2 + "/ws";
    try (TestDatabase db1 = TestDatabase.create(vertx);
        TestDatabase db2 = TestDatabase.create(vertx);
        TestServer s1 = TestServer.start("s1", db1.config(), Clock.systemUTC(),
            "{\"peers\":[{\"serverLogin\":\"s2\",\"url\":\"" + u2 + "\"}]}")) {
      // GIVEN s2 is down while alice (served by s1) publishes her card
      TestUser.create("alice").registerOn(vertx, s1);

      // WHEN s2 starts, and s1's peer connection to it comes up
      try (TestServer s2 = TestServer.start("s2", db2.config(), Clock.systemUTC(), "{}", p2)) {
        ShineClient onS2 = ShineClient.connect(vertx, s2.url()).await();

        // THEN s2 learns the card without anyone publishing it again
        Eventually.until("s2 learns alice's card", 15_000, () -> version(onS2, "alice") == 1);
      }
    }
  }

  @Test
  @DisplayName("the retry worker's due-row query reads the partial index, not the table")
  void dueRowsComeFromThePartialIndex(Vertx vertx) {
    try (TestDatabase db = TestDatabase.create(vertx)) {
      // the schema of a server's first start, without a server
      Database.prepare(vertx, db.config()).await();
      Pool sql = db.pool();
      try {
        // GIVEN many terminal rows and a few due ones
        sql.query("INSERT INTO dm_delivery (base_key, revision, owner, state, accepted_at_ms, attempts,"
            + " next_attempt_at_ms, updated_at_ms) SELECT 'k' || g, 0, 'alice', CASE WHEN g % 2 = 0 THEN 'delivered'"
            + " ELSE 'failed' END, 0, 1, NULL, 0 FROM generate_series(1, 20000) g").execute().await();
        sql.query("INSERT INTO dm_delivery (base_key, revision, owner, state, accepted_at_ms, attempts,"
            + " next_attempt_at_ms, updated_at_ms) SELECT 'due' || g, 0, 'alice', 'accepted', 0, 1, g, 0"
            + " FROM generate_series(1, 20) g").execute().await();
        sql.query("ANALYZE dm_delivery").execute().await();

        StringBuilder plan = new StringBuilder();
        for (Row row : sql.preparedQuery("EXPLAIN " + org.shine.server.db.DeliveryRepositoryPlans.CLAIM_DUE)
            .execute(Tuple.of(1_000L, 30_000L, 256)).await()) {
          plan.append(row.getString(0)).append('\n');
        }

        assertThat(plan.toString()).contains("dm_delivery_due").doesNotContain("Seq Scan on dm_delivery");
      } finally {
        sql.close().await();
      }
    }
  }

  private static long version(ShineClient client, String login) {
    try {
      return client.request("GetUserCard", ShineClient.object().put("login", login)).await()
          .at("/card/version").asLong();
    } catch (ShineClientException e) {
      return -1;
    }
  }

  private static SignedPair pair(TestUser from, TestUser to, String text) {
    return ShineClient.signPair(from.login(), from.key(), to.login(), System.currentTimeMillis(),
        ShineClient.randomNonce(), 0, text.getBytes(StandardCharsets.UTF_8));
  }
}
