package org.shine.server.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.support.Eventually;
import org.shine.server.support.Opened;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestDatabase;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.util.Json;

/**
 * The sync ops behind the trust boundary of PROTOCOL §6a, attacked as an outsider would: anonymous pullers, blind
 * ACKs, a server asking for users it does not share, a fake sibling named in a self-published card, settings stamped
 * in the future; and a backlog of the largest pairs, which must drain in pages a peer accepts.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 180, timeUnit = TimeUnit.SECONDS)
class SyncSecurityIT {
  private static final String FAST = "{\"sync\":{\"periodMs\":200,\"pageSize\":200},"
      + "\"delivery\":{\"callTimeoutMs\":2000}}";
  private final Opened opened = new Opened();

  @AfterEach
  void close() {
    opened.closeAll();
  }

  @Test
  @DisplayName("an anonymous connection gets 401 and no data from both sync ops, and its blind ACKs mark nothing")
  void anonymousPullerGetsNothing(Vertx vertx) {
    TestDatabase db = opened.keep(TestDatabase.create(vertx));
    TestServer s1 = opened.keep(TestServer.start("s1", db.config(), Clock.systemUTC()));
    TestUser alice = TestUser.create("alice").registerOn(vertx, s1);
    TestUser.create("bob").registerOn(vertx, s1);
    ShineClient session = opened.keep(alice.session(vertx, s1));
    for (int i = 0; i < 5; i++) {
      session.sendText("alice", alice.key(), "bob", "private " + i).await();
    }
    session.request("SetUserSetting", ShineClient.object().put("key", "theme").put("value", "dark")).await();
    Pool sql = opened.pool(db);
    long unsynced = count(sql, "SELECT count(*) FROM sync_outbox WHERE NOT synced");
    ShineClient outsider = opened.keep(ShineClient.connect(vertx, s1.url()).await());

    // WHEN it asks for s1's own outbox, with guessed ACKs
    for (String op : List.of("DmSyncBatch", "UserSettingsSyncBatch")) {
      ObjectNode payload = ShineClient.object().put("sourceServerLogin", "s1").put("limit", 1000);
      ArrayNode acks = payload.putArray("ackSyncIds");
      for (long id = 1; id <= 100; id++) {
        acks.add(id);
      }
      assertRefused(() -> outsider.request(op, payload).await(), 401, ErrorCode.NOT_AUTHENTICATED);
    }

    // THEN nothing was handed out or flipped
    assertThat(unsynced).isEqualTo(11);
    assertThat(count(sql, "SELECT count(*) FROM sync_outbox WHERE NOT synced")).isEqualTo(unsynced);
  }

  @Test
  @DisplayName("a server session gets and ACKs only items of owners routed to both servers, and may not pull as"
      + " another server")
  void serverSeesOnlySharedOwners(Vertx vertx) {
    StubPeer s9 = opened.keep(StubPeer.start(vertx)).named("s9");
    TestDatabase db = opened.keep(TestDatabase.create(vertx));
    TestServer s1 = opened.keep(TestServer.start("s1", db.config(), Clock.systemUTC()));
    TestUser alice = TestUser.create("alice").registerOn(vertx, s1);
    TestUser mallory = TestUser.create("mallory").publish(vertx, List.of(Map.entry("s1", s1.url()),
        Map.entry("s9", s9.url())), 1, s1.url());
    TestUser.create("bob").registerOn(vertx, s1);
    opened.keep(alice.session(vertx, s1)).sendText("alice", alice.key(), "bob", "alice's secret").await();
    opened.keep(mallory.session(vertx, s1)).sendText("mallory", mallory.key(), "bob", "mallory's own").await();
    Pool sql = opened.pool(db);
    List<Long> aliceItems = ids(sql, "SELECT sync_id FROM sync_outbox WHERE owner = 'alice'");
    ShineClient asS9 = opened.keep(s9.sessionOn(vertx, s1.url()));

    JsonNode page = asS9.request("DmSyncBatch", syncRequest("s9", aliceItems, 100)).await();

    assertThat(page.get("items")).isNotEmpty()
        .allSatisfy(item -> assertThat(item.get("owner").asText()).isEqualTo("mallory"));
    assertThat(count(sql, "SELECT count(*) FROM sync_outbox WHERE owner = 'alice' AND synced")).isZero();
    assertRefused(() -> asS9.request("DmSyncBatch", syncRequest("s1", List.of(), 100)).await(), 403,
        ErrorCode.SOURCE_MISMATCH);
  }

  @Test
  @DisplayName("a fake sibling named in a self-published card changes no one else's settings; a setting stamped in"
      + " the future is ACKed and dropped, and later local writes still work")
  void fakeSiblingSettings(Vertx vertx) {
    long now = System.currentTimeMillis();
    List<JsonNode> acks = new CopyOnWriteArrayList<>();
    StubPeer fake = opened.keep(StubPeer.start(vertx)).named("fake")
        .respond("UserSettingsSyncBatch", (op, p) -> {
          acks.add(p.get("ackSyncIds"));
          ObjectNode answer = Json.MAPPER.createObjectNode().put("hasMore", false);
          ArrayNode items = answer.putArray("items");
          if (acks.size() == 1) {
            items.addObject().put("syncId", 1).put("owner", "bob").put("key", "theme").put("value", "hacked")
                .put("updatedAtMs", now);
            items.addObject().put("syncId", 2).put("owner", "mallory").put("key", "theme").put("value", "mine")
                .put("updatedAtMs", now);
            items.addObject().put("syncId", 3).put("owner", "mallory").put("key", "lang").put("value", "forever")
                .put("updatedAtMs", Long.MAX_VALUE);
          }
          return answer;
        })
        .respond("DmSyncBatch", (op, p) -> Json.MAPPER.createObjectNode().put("hasMore", false)
            .set("items", Json.MAPPER.createArrayNode()));
    TestDatabase db = opened.keep(TestDatabase.create(vertx));
    TestServer s1 = opened.keep(TestServer.start("s1", db.config(), Clock.systemUTC(), FAST));
    TestUser bob = TestUser.create("bob").registerOn(vertx, s1);
    TestUser mallory = TestUser.create("mallory").publish(vertx, List.of(Map.entry("s1", s1.url()),
        Map.entry("fake", fake.url())), 1, s1.url());

    // WHEN s1 pulls from mallory's "sibling"
    Eventually.until("the page is ACKed", 10_000, () -> acks.size() >= 2);

    // THEN only mallory's own, present-day setting is applied, and the future one is ACKed all the same
    List<Long> acked = new ArrayList<>();
    acks.get(1).forEach(id -> acked.add(id.asLong()));
    assertThat(acked).containsExactlyInAnyOrder(2L, 3L);
    assertThat(settings(vertx, bob, s1)).isEmpty();
    assertThat(settings(vertx, mallory, s1)).isEqualTo(Map.of("theme", "\"mine\""));
    // and a stamp stored before this rule existed cannot make a later local write overflow
    Pool sql = opened.pool(db);
    sql.preparedQuery("INSERT INTO user_setting (owner, key, value_json, updated_at_ms) VALUES ($1, $2, $3, $4)")
        .execute(Tuple.of("mallory", "lang", "\"old\"", Long.MAX_VALUE)).await();
    ShineClient session = opened.keep(mallory.session(vertx, s1));
    JsonNode written = session.request("SetUserSetting", ShineClient.object().put("key", "lang").put("value", "en"))
        .await();
    assertThat(written.get("updatedAtMs").asLong()).isEqualTo(Long.MAX_VALUE);
    assertThat(settings(vertx, mallory, s1)).containsEntry("lang", "\"en\"");
  }

  @Test
  @DisplayName("a sibling's backlog of the largest pairs drains in pages under the response cap")
  void largestPairsDrain(Vertx vertx) {
    TestDatabase db1 = opened.keep(TestDatabase.create(vertx));
    TestDatabase db2 = opened.keep(TestDatabase.create(vertx));
    int port2 = TestServer.freePort();
    TestServer s1 = opened.keep(TestServer.start("s1", db1.config(), Clock.systemUTC(), FAST));
    String s2Url = "ws://127.0.0.1:" + port2 + "/ws";
    TestUser alice = TestUser.create("alice").publish(vertx, List.of(Map.entry("s1", s1.url()),
        Map.entry("s2", s2Url)), 1, s1.url());
    TestUser.create("bob").registerOn(vertx, s1);
    ShineClient session = opened.keep(alice.session(vertx, s1));
    // GIVEN s2 is down while alice sends 40 pairs of the largest body (two copies of ~87 KiB in base64 each)
    String body = "x".repeat(65_000);
    for (int i = 0; i < 40; i++) {
      session.sendText("alice", alice.key(), "bob", i + body).await();
    }

    // WHEN s2 comes up and pulls (one unbounded page would be about 7 MB, over what a peer accepts)
    TestServer s2 = opened.keep(TestServer.start("s2", db2.config(), Clock.systemUTC(), FAST, port2));
    Pool sql2 = opened.pool(db2);

    // THEN it has every pair
    Eventually.until("s2 holds alice's 40 pairs", 60_000,
        () -> count(sql2, "SELECT count(*) FROM dm_message WHERE owner = 'alice'") == 40);
    assertThat(s2.serverLogin()).isEqualTo("s2");
  }

  private static ObjectNode syncRequest(String puller, List<Long> acks, int limit) {
    ObjectNode payload = ShineClient.object().put("sourceServerLogin", puller).put("limit", limit);
    ArrayNode ids = payload.putArray("ackSyncIds");
    acks.forEach(ids::add);
    return payload;
  }

  private Map<String, String> settings(Vertx vertx, TestUser user, TestServer server) {
    ShineClient session = opened.keep(user.session(vertx, server));
    JsonNode settings = session.request("GetUserSettings", ShineClient.object()).await().get("settings");
    Map<String, String> values = new java.util.TreeMap<>();
    settings.properties().forEach(e -> values.put(e.getKey(), e.getValue().toString()));
    return values;
  }

  private static long count(Pool sql, String query) {
    return sql.query(query).execute().await().iterator().next().getLong(0);
  }

  private static List<Long> ids(Pool sql, String query) {
    List<Long> ids = new ArrayList<>();
    for (Row row : sql.query(query).execute().await()) {
      ids.add(row.getLong(0));
    }
    return ids;
  }

  private static void assertRefused(Runnable call, int status, String code) {
    assertThatThrownBy(call::run).isInstanceOfSatisfying(ShineClientException.class, e -> {
      assertThat(e.status()).as("status of [%s]", e.getMessage()).isEqualTo(status);
      assertThat(e.code()).as("code of [%s]", e.getMessage()).isEqualTo(code);
    });
  }

}
