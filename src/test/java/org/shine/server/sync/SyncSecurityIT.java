package org.shine.server.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Row;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.support.Eventually;
import org.shine.server.support.Sql;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
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
  private TestWorld world;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx);
  }

  @AfterEach
  void close() {
    world.close();
  }

  /* items owed: a copy's queue row (V13: a copy is its own sync item), an outbox item not synced */
  private static final String UNSYNCED = "SELECT (SELECT count(*) FROM sync_queue WHERE item_type IN (1, 2))"
      + " + (SELECT count(*) FROM sync_outbox WHERE NOT synced)";

  @Test
  @DisplayName("an anonymous connection gets 401 and no data from both sync ops, and its blind ACKs mark nothing")
  void anonymousPullerGetsNothing() {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    world.user("bob", s1);
    ShineClient session = world.session(alice, s1);
    for (int i = 0; i < 5; i++) {
      session.sendText("alice", alice.key(), "bob", "private " + i).await();
    }
    session.request("SetUserSetting", ShineClient.object().put("key", "theme").put("value", "dark")).await();
    Sql sql = world.sql(s1);
    long unsynced = sql.count(UNSYNCED);
    ShineClient outsider = world.anonymous(s1);

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
    assertThat(sql.count(UNSYNCED)).isEqualTo(unsynced);
  }

  @Test
  @DisplayName("a server session gets and ACKs only items of owners routed to both servers, and may not pull as"
      + " another server")
  void serverSeesOnlySharedOwners(Vertx vertx) {
    StubPeer s9 = world.stub();
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    TestUser mallory = world.user("mallory", List.of(Map.entry("s1", s1.url()),
        Map.entry(s9.serverLogin(), s9.url())), s1);
    world.user("bob", s1);
    world.session(alice, s1).sendText("alice", alice.key(), "bob", "alice's secret").await();
    world.session(mallory, s1).sendText("mallory", mallory.key(), "bob", "mallory's own").await();
    Sql sql = world.sql(s1);
    List<Long> aliceItems = ids(sql, "SELECT sync_id FROM sync_queue WHERE owner = 'alice'");
    ShineClient asS9 = world.keep(s9.sessionOn(vertx, s1.url()));

    JsonNode page = asS9.request("DmSyncBatch", syncRequest(s9.serverLogin(), aliceItems, 100)).await();

    assertThat(page.get("items")).isNotEmpty()
        .allSatisfy(item -> assertThat(item.get("owner").asText()).isEqualTo("mallory"));
    assertThat(aliceItems).isNotEmpty();
    assertThat(ids(sql, "SELECT sync_id FROM sync_queue WHERE owner = 'alice'")).isEqualTo(aliceItems);
    assertRefused(() -> asS9.request("DmSyncBatch", syncRequest("s1", List.of(), 100)).await(), 403,
        ErrorCode.SOURCE_MISMATCH);
  }

  @Test
  @DisplayName("a fake sibling named in a self-published card changes no one else's settings; a setting stamped in"
      + " the future is ACKed and dropped, and later local writes still work")
  void fakeSiblingSettings() {
    long now = System.currentTimeMillis();
    List<JsonNode> acks = new CopyOnWriteArrayList<>();
    StubPeer fake = world.stub()
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
    TestServer s1 = world.server("s1", FAST);
    TestUser bob = world.user("bob", s1);
    TestUser mallory = world.user("mallory", List.of(Map.entry("s1", s1.url()),
        Map.entry(fake.serverLogin(), fake.url())), s1);

    // WHEN s1 pulls from mallory's "sibling"
    Eventually.until("the page is ACKed", 10_000, () -> acks.size() >= 2);

    // THEN only mallory's own, present-day setting is applied, and the future one is ACKed all the same
    List<Long> acked = new ArrayList<>();
    acks.get(1).forEach(id -> acked.add(id.asLong()));
    assertThat(acked).containsExactlyInAnyOrder(2L, 3L);
    assertThat(settings(bob, s1)).isEmpty();
    assertThat(settings(mallory, s1)).isEqualTo(Map.of("theme", "\"mine\""));
    // and a stamp stored before this rule existed cannot make a later local write overflow
    Sql sql = world.sql(s1);
    sql.rows("INSERT INTO user_setting (owner, key, value_json, updated_at_ms) VALUES ($1, $2, $3, $4)", "mallory",
        "lang", "\"old\"", Long.MAX_VALUE);
    ShineClient session = world.session(mallory, s1);
    JsonNode written = session.request("SetUserSetting", ShineClient.object().put("key", "lang").put("value", "en"))
        .await();
    assertThat(written.get("updatedAtMs").asLong()).isEqualTo(Long.MAX_VALUE);
    assertThat(settings(mallory, s1)).containsEntry("lang", "\"en\"");
  }

  @Test
  @DisplayName("a sibling's backlog of the largest pairs drains in pages under the response cap")
  void largestPairsDrain() {
    world.sites("s1", "s2");
    TestServer s1 = world.server("s1", FAST);
    String s2Url = world.url("s2");
    TestUser alice = world.user("alice", List.of(Map.entry("s1", s1.url()),
        Map.entry("s2", s2Url)), s1);
    world.user("bob", s1);
    ShineClient session = world.session(alice, s1);
    // GIVEN s2 is down while alice sends 40 pairs of the largest body (two copies of ~87 KiB in base64 each)
    String body = "x".repeat(65_000);
    for (int i = 0; i < 40; i++) {
      session.sendText("alice", alice.key(), "bob", i + body).await();
    }

    // WHEN s2 comes up and pulls (one unbounded page would be about 7 MB, over what a peer accepts)
    TestServer s2 = world.server("s2", FAST);
    Sql sql2 = world.sql(s2);

    // THEN it has every pair
    Eventually.until("s2 holds alice's 40 pairs", 60_000,
        () -> sql2.count("SELECT count(*) FROM dm_message WHERE owner = 'alice'") == 40);
    assertThat(s2.serverLogin()).isEqualTo("s2");
  }

  private static ObjectNode syncRequest(String puller, List<Long> acks, int limit) {
    ObjectNode payload = ShineClient.object().put("sourceServerLogin", puller).put("limit", limit);
    ArrayNode ids = payload.putArray("ackSyncIds");
    acks.forEach(ids::add);
    return payload;
  }

  private Map<String, String> settings(TestUser user, TestServer server) {
    ShineClient session = world.session(user, server);
    JsonNode settings = session.request("GetUserSettings", ShineClient.object()).await().get("settings");
    Map<String, String> values = new java.util.TreeMap<>();
    settings.properties().forEach(e -> values.put(e.getKey(), e.getValue().toString()));
    return values;
  }

  private static List<Long> ids(Sql sql, String query) {
    List<Long> ids = new ArrayList<>();
    for (Row row : sql.rows(query)) {
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
