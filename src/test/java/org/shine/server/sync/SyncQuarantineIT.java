package org.shine.server.sync;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Row;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.cli.AdminCommand;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.KeyFile;
import org.shine.server.support.Eventually;
import org.shine.server.support.Scrape;
import org.shine.server.support.Sql;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;
import picocli.CommandLine;

/**
 * Items a puller cannot store, handled by why (PROTOCOL §8 v3), pulled by a real server (s2) from a stub sibling of
 * alice's: malformed and conflicting items are ACKed and quarantined (table, counter, admin API, CLI); a bad
 * signature is checked again after the author's card is refreshed from the source; quarantined items are checked
 * again when a card changes, and leave the quarantine once they store. The settings quota's refusal is covered by
 * {@link TriageTest} (the quota itself is enforced by {@code SettingsRepository.applySynced}).
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class SyncQuarantineIT {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private TestWorld world;
  private StubPeer source;
  private TestServer s2;
  private int adminPort;
  private TestUser alice;
  /** What the stub serves on every DM page until it is ACKed, and every ACK list it got. */
  private final Map<Long, ObjectNode> dmItems = new ConcurrentHashMap<>();
  private final Map<Long, ObjectNode> settingItems = new ConcurrentHashMap<>();
  private final List<Long> acked = new CopyOnWriteArrayList<>();

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx);
    source = world.stub();
    serve("DmSyncBatch", dmItems);
    serve("UserSettingsSyncBatch", settingItems);
    adminPort = TestServer.freePort();
    s2 = world.server("s2", TestServer.merge(
        TestServer.json("{\"sync\":{\"periodMs\":200},\"delivery\":{\"callTimeoutMs\":2000}}"),
        TestServer.admin(adminPort)));
    alice = world.user("alice", List.of(Map.entry(source.serverLogin(), source.url()), Map.entry("s2", s2.url())),
        s2);
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("malformed and conflicting items are ACKed and quarantined with their reason, counted and listed by"
      + " the admin API and CLI; an item of a user not routed to both stays unACKed; a change of the owner's card"
      + " checks them again")
  void malformedAndConflict() {
    TestUser bob = world.user("bob", s2);
    SignedPair stored = alice.pairTo(bob, "stored on s2");
    world.session(alice, s2).sendPair(stored).await();
    SignedPair conflicting = ShineClient.signPair("alice", alice.key(), "bob", stored.outgoing().createdAtMs(),
        stored.outgoing().nonce(), 0, "other bytes, same key".getBytes(StandardCharsets.UTF_8));
    SignedPair good = alice.pairTo(bob, "good");

    // WHEN the sibling serves them
    settingItems.put(100L, Json.MAPPER.createObjectNode().put("syncId", 100).put("owner", "alice")
        .put("updatedAtMs", 1).put("value", "no key"));
    dmItems.put(101L, dmItem(101, "pair", "alice", b64("garbage".getBytes(StandardCharsets.UTF_8)),
        b64(good.outgoing().bytes())));
    dmItems.put(102L, dmItem(102, "receipt", "alice", b64(good.incoming().bytes())));
    dmItems.put(103L, dmItem(103, "pair", "alice", "!!!not base64!!!", b64(good.outgoing().bytes())));
    dmItems.put(104L, Json.MAPPER.createObjectNode().put("syncId", 104).put("owner", "alice").put("type", "pair"));
    dmItems.put(105L, dmItem(105, "pair", "alice", b64(conflicting.incoming().bytes()),
        b64(conflicting.outgoing().bytes())));
    dmItems.put(106L, dmItem(106, "pair", "alice", b64(good.incoming().bytes()), b64(good.outgoing().bytes())));
    dmItems.put(107L, dmItem(107, "pair", "nobody", b64(good.incoming().bytes()), b64(good.outgoing().bytes())));

    // THEN all but the stranger's are ACKed: one stored, six quarantined
    Eventually.until("items 100 to 106 ACKed", 20_000, () -> acked.containsAll(List.of(100L, 101L, 102L, 103L,
        104L, 105L, 106L)));
    long pages = source.count("DmSyncBatch");
    Eventually.until("two more pulls", 10_000, () -> source.count("DmSyncBatch") >= pages + 2);
    assertThat(acked).doesNotContain(107L);
    Sql sql = world.sql(s2);
    assertThat(sql.count("SELECT count(*) FROM dm_message WHERE owner = 'alice' AND base_key = $1",
        good.outgoing().baseKey())).isEqualTo(1);
    assertThat(reasons(sql)).isEqualTo(Map.of(100L, "malformed", 101L, "malformed", 102L, "malformed",
        103L, "malformed", 104L, "malformed", 105L, "conflict"));
    assertThat(sql.count("SELECT count(*) FROM sync_quarantine WHERE owner = 'alice' AND source_server = $1",
        source.serverLogin())).isEqualTo(6);
    Scrape scrape = Scrape.of(s2);
    assertThat(scrape.value("shine_sync_quarantined_total", "reason", "malformed")).isEqualTo(5.0);
    assertThat(scrape.value("shine_sync_quarantined_total", "reason", "conflict")).isEqualTo(1.0);
    assertThat(scrape.value("shine_sync_quarantined_total", "reason", "bad_signature")).isZero();

    // AND the admin API lists them oldest first, in pages
    JsonNode first = admin("/sync-quarantine?owner=alice&limit=4");
    assertThat(first.get("items")).hasSize(4);
    assertThat(first.at("/items/0/sourceServerLogin").asText()).isEqualTo(source.serverLogin());
    assertThat(first.at("/items/1/item/syncId").asLong()).isEqualTo(first.at("/items/1/syncId").asLong());
    JsonNode rest = admin("/sync-quarantine?owner=alice&limit=4&afterId=" + first.get("nextAfterId").asLong());
    assertThat(rest.get("items")).hasSize(2);
    assertThat(rest.get("nextAfterId").isNull()).isTrue();
    List<Long> listed = new ArrayList<>();
    first.get("items").forEach(item -> listed.add(item.get("id").asLong()));
    rest.get("items").forEach(item -> listed.add(item.get("id").asLong()));
    assertThat(listed).isSorted().doesNotHaveDuplicates();
    assertThat(adminStatus("/sync-quarantine?limit=0")).isEqualTo(400);
    assertThat(adminStatus("/sync-quarantine?owner=NOT%20A%20LOGIN")).isEqualTo(400);
    StringWriter out = new StringWriter();
    int code = new CommandLine(new AdminCommand()).setOut(new PrintWriter(out, true))
        .execute("--url", "http://127.0.0.1:" + adminPort, "sync-quarantine", "--owner", "alice");
    assertThat(code).isZero();
    assertThat(out.toString()).contains("REASON", "malformed", "conflict", "6 quarantined item(s)");

    // WHEN alice's card changes, THEN her items are checked again and, still not storable, stay
    long before = sql.count("SELECT max(checked_at_ms) FROM sync_quarantine");
    alice.publish(world.vertx(), List.of(Map.entry(source.serverLogin(), source.url()), Map.entry("s2", s2.url())),
        2, s2.url());
    Eventually.until("the quarantined items checked again", 10_000,
        () -> sql.count("SELECT min(checked_at_ms) FROM sync_quarantine") > before);
    assertThat(reasons(sql)).hasSize(6).containsEntry(105L, "conflict");
  }

  @Test
  @DisplayName("a bad signature: the author's card is refreshed from the source first (a valid newer card is"
      + " accepted, a forged one is not), then the item is checked again and quarantined as it still fails")
  void badSignatureAfterCardRefresh(Vertx vertx) {
    TestUser carol = world.user("carol", s2);
    TestUser dave = world.user("dave", s2);
    KeyFile mallory = KeyFile.generate("mallory");
    List<Map.Entry<String, String>> onS2 = List.of(Map.entry("s2", s2.url()));
    ObjectNode forgedCard = ShineClient.signedCard("dave", mallory, onS2, 5).put("publicKeyB64",
        dave.key().publicKeyB64());
    List<String> cardsAsked = new CopyOnWriteArrayList<>();
    source.respond("GetUserCard", (op, p) -> {
      String login = p.path("login").asText();
      cardsAsked.add(login);
      ObjectNode answer = Json.MAPPER.createObjectNode();
      return answer.set("card", login.equals("carol") ? ShineClient.signedCard("carol", carol.key(), onS2, 2)
          : forgedCard);
    });

    // WHEN the sibling serves copies for alice signed by mallory in carol's and dave's names
    dmItems.put(201L, dmItem(201, "incoming", "alice", b64(forged("carol", mallory).bytes())));
    dmItems.put(202L, dmItem(202, "incoming", "alice", b64(forged("dave", mallory).bytes())));

    // THEN both authors' cards were asked for, carol's newer card is accepted and dave's forged one is not
    Eventually.until("both items ACKed", 20_000, () -> acked.containsAll(List.of(201L, 202L)));
    assertThat(cardsAsked).contains("carol", "dave");
    Sql sql = world.sql(s2);
    assertThat(sql.count("SELECT version FROM user_card WHERE login = 'carol'")).isEqualTo(2);
    assertThat(sql.count("SELECT version FROM user_card WHERE login = 'dave'")).isEqualTo(1);
    // AND both are quarantined as bad signatures, under their authors, and nothing of them is stored
    assertThat(reasons(sql)).isEqualTo(Map.of(201L, "bad_signature", 202L, "bad_signature"));
    assertThat(sql.count("SELECT count(*) FROM sync_quarantine WHERE author = 'carol'")).isEqualTo(1);
    assertThat(sql.count("SELECT count(*) FROM dm_message WHERE owner = 'alice'")).isZero();
    assertThat(Scrape.of(s2).value("shine_sync_quarantined_total", "reason", "bad_signature")).isEqualTo(2.0);
  }

  @Test
  @DisplayName("an item quarantined because the author's login was squatted here is stored, and leaves the"
      + " quarantine, once the real author's card is accepted")
  void recheckedWhenTheAuthorsCardChanges(Vertx vertx) {
    List<Map.Entry<String, String>> onS2 = List.of(Map.entry("s2", s2.url()));
    TestUser erin = TestUser.create("erin");
    new TestUser("erin", KeyFile.generate("erin")).publish(vertx, onS2, 1, s2.url());
    source.respond("GetUserCard", (op, p) -> Json.MAPPER.createObjectNode()
        .set("card", ShineClient.signedCard("erin", erin.key(), onS2, 1)));
    DmContainer fromErin = DmCodec.sign(DmKind.INCOMING, System.currentTimeMillis(), ShineClient.randomNonce(), 0,
        "erin", "alice", "", "hello from the real erin".getBytes(StandardCharsets.UTF_8), erin.key().privateKey());
    dmItems.put(301L, dmItem(301, "incoming", "alice", b64(fromErin.bytes())));
    Eventually.until("the item ACKed", 20_000, () -> acked.contains(301L));
    Sql sql = world.sql(s2);
    assertThat(reasons(sql)).isEqualTo(Map.of(301L, "bad_signature"));

    // WHEN the operator removes the squatted card and the real erin publishes hers
    sql.rows("DELETE FROM user_card WHERE login = 'erin'");
    erin.publish(vertx, onS2, 1, s2.url());

    // THEN the item is stored and leaves the quarantine
    Eventually.until("the item leaves the quarantine", 10_000,
        () -> sql.count("SELECT count(*) FROM sync_quarantine") == 0);
    assertThat(sql.count("SELECT count(*) FROM dm_message WHERE owner = 'alice' AND base_key = $1",
        fromErin.baseKey())).isEqualTo(1);
  }

  @Test
  @DisplayName("by sync, a copy created 15 minutes ahead (within twice the skew) is stored, one 25 minutes ahead is"
      + " left unACKed and not quarantined, and it holds back nothing after it")
  void futureBoundOfSync() {
    TestUser bob = world.user("bob", s2);
    long now = System.currentTimeMillis();
    SignedPair early = ShineClient.signPair("alice", alice.key(), "bob", now + 15 * 60_000,
        ShineClient.randomNonce(), 0, "early".getBytes(StandardCharsets.UTF_8));
    SignedPair tooEarly = ShineClient.signPair("alice", alice.key(), "bob", now + 25 * 60_000,
        ShineClient.randomNonce(), 0, "too early".getBytes(StandardCharsets.UTF_8));
    SignedPair after = alice.pairTo(bob, "after it");

    dmItems.put(401L, dmItem(401, "pair", "alice", b64(tooEarly.incoming().bytes()),
        b64(tooEarly.outgoing().bytes())));
    dmItems.put(402L, dmItem(402, "pair", "alice", b64(early.incoming().bytes()), b64(early.outgoing().bytes())));
    dmItems.put(403L, dmItem(403, "pair", "alice", b64(after.incoming().bytes()), b64(after.outgoing().bytes())));

    Eventually.until("402 and 403 ACKed", 20_000, () -> acked.containsAll(List.of(402L, 403L)));
    long pages = source.count("DmSyncBatch");
    Eventually.until("two more pulls", 10_000, () -> source.count("DmSyncBatch") >= pages + 2);
    assertThat(acked).doesNotContain(401L);
    Sql sql = world.sql(s2);
    assertThat(sql.count("SELECT count(*) FROM dm_message WHERE owner = 'alice'")).isEqualTo(2);
    assertThat(sql.count("SELECT count(*) FROM dm_message WHERE base_key = $1", tooEarly.outgoing().baseKey()))
        .isZero();
    assertThat(sql.count("SELECT count(*) FROM sync_quarantine")).isZero();
  }

  /** The stub serves {@code items} on every page of {@code op} until each is ACKed, recording the ACKs. */
  private void serve(String op, Map<Long, ObjectNode> items) {
    source.respond(op, (o, p) -> {
      p.path("ackSyncIds").forEach(id -> {
        acked.add(id.asLong());
        items.remove(id.asLong());
      });
      ObjectNode page = Json.MAPPER.createObjectNode().put("hasMore", false);
      ArrayNode out = page.putArray("items");
      if (p.path("limit").asInt() > 0) {
        new TreeMap<>(items).values().forEach(out::add);
      }
      return page;
    });
  }

  private static DmContainer forged(String author, KeyFile signer) {
    return DmCodec.sign(DmKind.INCOMING, System.currentTimeMillis(), ShineClient.randomNonce(), 0, author, "alice",
        "", ("in " + author + "'s name").getBytes(StandardCharsets.UTF_8), signer.privateKey());
  }

  private static ObjectNode dmItem(long syncId, String type, String owner, String... blobsB64) {
    ObjectNode item = Json.MAPPER.createObjectNode().put("syncId", syncId).put("owner", owner).put("type", type);
    ArrayNode blobs = item.putArray("blobsB64");
    for (String blob : blobsB64) {
      blobs.add(blob);
    }
    return item;
  }

  private static Map<Long, String> reasons(Sql sql) {
    Map<Long, String> reasons = new TreeMap<>();
    for (Row row : sql.rows("SELECT source_sync_id, reason FROM sync_quarantine")) {
      reasons.put(row.getLong(0), row.getString(1));
    }
    return reasons;
  }

  private JsonNode admin(String path) {
    HttpResponse<String> response = get(path);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    try {
      return Json.MAPPER.readTree(response.body());
    } catch (java.io.IOException e) {
      throw new AssertionError(response.body(), e);
    }
  }

  private int adminStatus(String path) {
    return get(path).statusCode();
  }

  private HttpResponse<String> get(String path) {
    try {
      return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/admin/v1" + path))
          .GET().build(), HttpResponse.BodyHandlers.ofString());
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static String b64(byte[] bytes) {
    return Base64.getEncoder().encodeToString(bytes);
  }
}
