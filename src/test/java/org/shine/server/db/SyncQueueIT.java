package org.shine.server.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.config.AppConfig;
import org.shine.server.db.SyncRepository.DmItem;
import org.shine.server.db.SyncRepository.HeldItem;
import org.shine.server.db.SyncRepository.Lane;
import org.shine.server.dm.DmKind;
import org.shine.server.model.CopyKey;
import org.shine.server.model.CopyWrite;
import org.shine.server.model.DeliveryPlan;
import org.shine.server.model.DeliveryState;
import org.shine.server.support.TestDatabase;

/**
 * The per-sibling sync queue ({@code sync_queue}, PROTOCOL §8) against the real schema, this server being s1: a row
 * per sibling goes in with each unsynced item, the sibling's ACK (or the forward mark) takes it out, a sibling sees
 * only owners it shares with s1, a full re-sync fills it again, it follows an owner's routes, and a page is one
 * bounded range of it.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class SyncQueueIT {
  private static final String SELF = "s1";
  private static Vertx vertx;
  private static TestDatabase db;
  private static Pool pool;
  private static DmRepository copies;
  private static SignalRepository signals;
  private static SettingsRepository settings;
  private static SyncRepository sync;
  private static OpsRepository ops;

  @BeforeAll
  static void schema() {
    vertx = Vertx.vertx();
    db = TestDatabase.create(vertx);
    Database.prepare(vertx, db.config()).await();
    pool = db.pool();
    copies = new DmRepository(pool, SELF);
    signals = new SignalRepository(pool, SELF);
    settings = new SettingsRepository(pool, new AppConfig.Quotas(100, 100_000), SELF);
    sync = new SyncRepository(pool, SELF);
    ops = new OpsRepository(pool);
  }

  @AfterAll
  static void drop() {
    pool.close().await();
    db.close();
    vertx.close().await();
  }

  @BeforeEach
  void users() {
    pool.query("TRUNCATE user_card, user_access_servers_current, dm_message, dm_delivery, dm_signal, sync_outbox,"
        + " sync_queue, user_setting").execute().await();
    // alice shares s1 with s2, carol with s3; dave has s1 alone; erin is not served here
    routes("alice", "s1", "s2");
    routes("carol", "s3", "s1");
    routes("dave", "s1");
    routes("erin", "s2", "s3");
  }

  @Test
  @DisplayName("an unsynced copy, signal and local setting are queued for the owner's sibling by the statement that"
      + " writes them; a synced item is not; a copy of an owner without a sibling here is owed to nobody yet")
  void queuedWithTheItem() {
    store(incoming("alice", "a1", false), incoming("alice", "a2", true), incoming("carol", "c1", false),
        incoming("dave", "d1", false), incoming("erin", "e1", false));
    signals.store("alice", new SignalRepository.Signal("alice|receipt|1", 3, "alice", "a1", 1, new byte[] {3}),
        false, null, 0, 1, null).await();
    settings.setLocal("alice", "theme", "\"dark\"", 1).await();
    settings.applySynced("alice", "lang", "\"en\"", 1, 1).await();

    assertThat(queued("s2")).containsExactly("alice/a1/dm", "alice/alice|receipt|1/dm", "alice/theme/settings");
    assertThat(queued("s3")).containsExactly("carol/c1/dm");
    assertThat(count("SELECT count(*) FROM sync_queue WHERE owner IN ('dave', 'erin') AND sibling <> ''"
        + " OR sibling = 's1'")).isZero();
    assertThat(queued("")).containsExactly("dave/d1/dm", "erin/e1/dm");
    assertThat(count("SELECT count(*) FROM sync_outbox WHERE item_type IN (1, 2)")).as("a copy is its own item")
        .isZero();
  }

  @Test
  @DisplayName("the sibling's ACK deletes its row and marks the item synced; an ACK of another server, of the other"
      + " lane or a second one deletes nothing")
  void ackDeletesTheRow() {
    store(incoming("alice", "a1", false), incoming("alice", "a2", false));
    List<Long> ids = syncIds("alice");

    assertThat(sync.ack("s3", Lane.DM, ids).await()).isZero();
    assertThat(sync.ack("s2", Lane.SETTINGS, ids).await()).isZero();
    assertThat(queued("s2")).hasSize(2);

    assertThat(sync.ack("s2", Lane.DM, List.of(ids.get(0))).await()).isEqualTo(1);
    assertThat(sync.ack("s2", Lane.DM, List.of(ids.get(0))).await()).isZero();

    assertThat(queued("s2")).containsExactly("alice/a2/dm");
    assertThat(sync.dmPage("s2", 0, 10).await()).extracting(DmItem::syncId).containsExactly(ids.get(1));
  }

  @Test
  @DisplayName("the sibling's ACK of a receipt or setting marks its outbox item synced")
  void ackMarksOutboxItems() {
    signals.store("alice", new SignalRepository.Signal("alice|receipt|1", 3, "alice", "a1", 1, new byte[] {3}),
        false, null, 0, 1, null).await();
    settings.setLocal("alice", "theme", "\"dark\"", 1).await();
    List<Long> ids = syncIds("alice");

    assertThat(sync.ack("s2", Lane.DM, ids).await()).isEqualTo(1);
    assertThat(sync.ack("s2", Lane.SETTINGS, ids).await()).isEqualTo(1);

    assertThat(queued("s2")).isEmpty();
    assertThat(count("SELECT count(*) FROM sync_outbox WHERE synced AND owner = 'alice'")).isEqualTo(2);
  }

  @Test
  @DisplayName("a copy's new revision replaces its row under a new syncId, so a sibling whose cursor passed the old"
      + " one is offered it; an ACK of the old syncId leaves the new revision owed")
  void newRevisionReplacesTheRow() {
    store(incoming("alice", "a1", false));
    long first = syncIds("alice").get(0);
    assertThat(sync.dmPage("s2", 0, 10).await()).extracting(DmItem::syncId).containsExactly(first);

    store(CopyWrite.incoming(new CopyKey("alice", "a1"), "bob", 7, 1, "a1 edited".getBytes(StandardCharsets.UTF_8),
        false, null));
    assertThat(sync.ack("s2", Lane.DM, List.of(first)).await()).isZero();

    List<DmItem> page = sync.dmPage("s2", first, 10).await();
    assertThat(page).singleElement().satisfies(item -> {
      assertThat(item.syncId()).isGreaterThan(first);
      assertThat(new String(item.blob(), StandardCharsets.UTF_8)).isEqualTo("a1 edited");
    });
    assertThat(count("SELECT count(*) FROM sync_queue WHERE owner = 'alice' AND revision = 1")).isEqualTo(1);
    assertThat(sync.ack("s2", Lane.DM, List.of(page.get(0).syncId())).await()).isEqualTo(1);
    assertThat(queued("s2")).isEmpty();
  }

  @Test
  @DisplayName("a server sees and ACKs only items of owners routed to it and to s1, even a row left for it")
  void nonSiblingSeesNothing() {
    store(incoming("alice", "a1", false), incoming("carol", "c1", false));
    signals.store("alice", new SignalRepository.Signal("alice|receipt|1", 3, "alice", "a1", 1, new byte[] {3}),
        false, null, 0, 1, null).await();
    // rows for s3 of alice's, as items written in the instant her routes changed could leave
    pool.query("INSERT INTO sync_queue (sibling, sync_id, owner, item_type, item_key, created_at_ms)"
        + " SELECT 's3', sync_id, owner, item_type, item_key, created_at_ms FROM sync_outbox WHERE owner = 'alice'")
        .execute().await();
    pool.query("INSERT INTO dm_message (owner, base_key, direction, peer, created_at_ms, revision, blob,"
        + " stored_at_ms) VALUES ('alice', 'a9', 1, 'bob', 7, 0, '\\x61', 7)").execute().await();
    pool.query("INSERT INTO sync_queue (sibling, sync_id, owner, item_type, item_key, created_at_ms)"
        + " VALUES ('s3', nextval('sync_outbox_sync_id_seq'), 'alice', 2, 'a9', 7)").execute().await();

    assertThat(sync.dmPage("s3", 0, 10).await()).extracting(DmItem::owner).containsExactly("carol");
    assertThat(sync.dmPage("s2", 0, 10).await()).extracting(DmItem::owner).containsExactly("alice", "alice");
    assertThat(sync.dmPage("s9", 0, 10).await()).isEmpty();
    assertThat(sync.ack("s3", Lane.DM, syncIds("alice")).await()).isZero();
    assertThat(sync.ack("s2", Lane.DM, syncIds("carol")).await()).isZero();
    assertThat(count("SELECT count(*) FROM sync_outbox WHERE synced")).isZero();
    assertThat(ops.syncLag(SELF).await()).as("carol's copy only").containsEntry("s3", 1L);
  }

  @Test
  @DisplayName("MarkAllUserSettingsUnsynced owes every item of the owner to its sibling again, in both lanes")
  void markAllRefills() {
    store(incoming("alice", "a1", false), incoming("alice", "a2", true), incoming("dave", "d1", false));
    settings.setLocal("alice", "theme", "\"dark\"", 1).await();
    sync.ack("s2", Lane.DM, syncIds("alice")).await();
    sync.ack("s2", Lane.SETTINGS, syncIds("alice")).await();
    assertThat(queued("s2")).isEmpty();

    assertThat(sync.markAllUnsynced("alice").await()).isEqualTo(3);
    assertThat(sync.markAllUnsynced("dave").await()).isZero();

    assertThat(queued("s2")).as("each copy owed anew, after the settings item's own syncId")
        .containsExactly("alice/theme/settings", "alice/a1/dm", "alice/a2/dm");
    assertThat(count("SELECT count(*) FROM sync_outbox WHERE synced")).isZero();
    assertThat(queued("")).as("dave's copy stays owed to nobody").containsExactly("dave/d1/dm");
    assertThat(sync.settingsPage("s2", 0, 10).await()).singleElement()
        .satisfies(item -> assertThat(item.key()).isEqualTo("theme"));
  }

  @Test
  @DisplayName("a page is the range after afterSyncId of the sibling's lane, in syncId order, at most limit long")
  void pageKeyedAndBounded() {
    List<CopyWrite> writes = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      writes.add(incoming(i % 2 == 0 ? "alice" : "carol", "k" + i, false));
    }
    store(writes.toArray(new CopyWrite[0]));
    settings.setLocal("alice", "theme", "\"dark\"", 1).await();
    List<Long> alices = syncIds("alice");

    List<DmItem> first = sync.dmPage("s2", 0, 100).await();
    List<DmItem> after = sync.dmPage("s2", alices.get(199), 100).await();

    assertThat(first).extracting(DmItem::syncId).containsExactlyElementsOf(alices.subList(0, 100));
    assertThat(after).extracting(DmItem::syncId).containsExactlyElementsOf(alices.subList(200, 250));
    assertThat(first).allSatisfy(item -> assertThat(new String(item.blob(), StandardCharsets.UTF_8))
        .startsWith("k"));
    assertThat(sync.settingsPage("s2", 0, 100).await()).hasSize(1);
  }

  @Test
  @DisplayName("the forward mark takes a pair off the sibling's queue and marks it synced")
  void forwardMarkDequeues() {
    store(outgoing("alice", "p1"), outgoing("alice", "p2"));

    assertThat(sync.markSiblingHas(List.of(HeldItem.forwardedPair("alice", "p1", 0),
        HeldItem.forwardedPair("alice", "nope", 0))).await()).isEqualTo(1);

    assertThat(queued("s2")).containsExactly("alice/p2/dm");
  }

  @Test
  @DisplayName("a copy the sibling holds (found stored here when pulled from it) leaves the queue at that revision"
      + " and type; a copy of another type, or one owed at a newer revision, stays")
  void siblingHasCopyDequeues() {
    store(incoming("alice", "c1", false), incoming("alice", "c2", false),
        CopyWrite.incoming(new CopyKey("alice", "c3"), "bob", 7, 2, new byte[] {3}, false, null));

    assertThat(sync.markSiblingHas(List.of(new HeldItem("alice", SyncRepository.INCOMING, "c1", 0),
        new HeldItem("alice", SyncRepository.PAIR, "c2", 0), new HeldItem("alice", SyncRepository.INCOMING, "c3", 1)))
        .await()).isEqualTo(1);

    assertThat(queued("s2")).containsExactly("alice/c2/dm", "alice/c3/dm");
  }

  @Test
  @DisplayName("when an owner's routes change, a new sibling is owed what no sibling has yet, a server left is owed"
      + " nothing, and an owner who leaves s1 owes nothing")
  void followsRoutes() {
    store(incoming("alice", "a1", false), incoming("alice", "a2", false));
    sync.ack("s2", Lane.DM, List.of(syncIds("alice").get(0))).await();

    changeRoutes("alice", "s1", "s3");
    assertThat(queued("s2")).isEmpty();
    assertThat(queued("s3")).containsExactly("alice/a2/dm");
    assertThat(sync.dmPage("s3", 0, 10).await()).extracting(DmItem::owner).containsExactly("alice");

    changeRoutes("alice", "s2", "s3");
    assertThat(count("SELECT count(*) FROM sync_queue WHERE sibling <> ''")).isZero();
    assertThat(queued("")).as("owed to nobody while s1 is not her server").containsExactly("alice/a2/dm");

    changeRoutes("alice", "s3", "s1");
    assertThat(queued("s3")).containsExactly("alice/a2/dm");
  }

  @Test
  @DisplayName("the gauge and the admin API's count per sibling read the queue")
  void lagReadsTheQueue() {
    store(incoming("alice", "a1", false), incoming("alice", "a2", false), incoming("carol", "c1", false));

    assertThat(ops.syncLag(SELF).await()).isEqualTo(Map.of("s2", 2L, "s3", 1L));
    assertThat(ops.unsyncedOf("alice", SELF).await()).isEqualTo(Map.of("s2", 2L));
    assertThat(ops.unsyncedOf("dave", SELF).await()).isEmpty();
  }

  @Test
  @DisplayName("the migration owes what was unsynced before it to the owner's sibling, as named by the migrator")
  void migrationFillsTheQueue() {
    onMigratedDatabase(oldPool -> {
      oldPool.query("DROP TABLE sync_queue").execute().await();
      oldPool.query("DELETE FROM schema_migration WHERE version = 9").execute().await();
      oldPool.query("INSERT INTO user_card (login, public_key, version, card_json, updated_at_ms) VALUES"
          + " ('alice', '\\x00', 1, '{}', 0), ('dave', '\\x00', 1, '{}', 0)").execute().await();
      oldPool.query("INSERT INTO user_access_servers_current (login, position, server_login, url) VALUES"
          + " ('alice', 0, 's1', 'ws://127.0.0.1:1/ws'), ('alice', 1, 's2', 'ws://127.0.0.1:2/ws'),"
          + " ('dave', 0, 's1', 'ws://127.0.0.1:1/ws')").execute().await();
      oldPool.query("INSERT INTO sync_outbox (owner, item_type, item_key, revision, synced, created_at_ms) VALUES"
          + " ('alice', 2, 'a1', 0, false, 1), ('alice', 5, 'theme', 1, false, 2), ('alice', 2, 'a2', 0, true, 3),"
          + " ('dave', 2, 'd1', 0, false, 4)").execute().await();

      new Migrator(oldPool, SELF).migrate().await();

      List<String> rows = new ArrayList<>();
      for (Row row : oldPool.query("SELECT sibling, item_key, settings FROM sync_queue ORDER BY sync_id").execute()
          .await()) {
        rows.add(row.getString(0) + "/" + row.getString(1) + "/" + row.getBoolean(2));
      }
      assertThat(rows).containsExactly("s2/a1/false", "s2/theme/true");
    });
  }

  @Test
  @DisplayName("V13 makes each copy its own item: the newest unsynced revision keeps one row (owed to nobody when no"
      + " sibling is owed it), a synced copy none, and the outbox keeps receipts, tombstones and settings only")
  void copiesBecomeTheirOwnItems() {
    onMigratedDatabase(oldPool -> {
      // back to V12's shape
      oldPool.query("DROP INDEX sync_queue_copy, sync_queue_owner").execute().await();
      oldPool.query("ALTER TABLE sync_queue DROP COLUMN revision").execute().await();
      oldPool.query("CREATE INDEX sync_queue_owner ON sync_queue (owner, sibling)").execute().await();
      oldPool.query("DELETE FROM schema_migration WHERE version = 13").execute().await();
      oldPool.query("INSERT INTO sync_outbox (sync_id, owner, item_type, item_key, revision, synced, created_at_ms)"
          + " VALUES (1, 'alice', 2, 'a1', 0, false, 1), (2, 'alice', 2, 'a1', 1, false, 2),"
          + " (3, 'alice', 1, 'p1', 0, true, 3), (4, 'alice', 3, 'alice|receipt|1', 1, false, 4),"
          + " (5, 'dave', 2, 'd1', 0, false, 5)").execute().await();
      oldPool.query("INSERT INTO sync_queue (sibling, sync_id, owner, item_type, item_key, created_at_ms) VALUES"
          + " ('s2', 1, 'alice', 2, 'a1', 1), ('s2', 2, 'alice', 2, 'a1', 2),"
          + " ('s2', 4, 'alice', 3, 'alice|receipt|1', 4)").execute().await();

      new Migrator(oldPool, SELF).migrate().await();

      List<String> rows = new ArrayList<>();
      for (Row row : oldPool.query("SELECT sibling, sync_id, item_key, revision FROM sync_queue ORDER BY sync_id")
          .execute().await()) {
        rows.add(row.getString(0) + "/" + row.getLong(1) + "/" + row.getString(2) + "/" + row.getLong(3));
      }
      assertThat(rows).containsExactly("s2/2/a1/1", "s2/4/alice|receipt|1/0", "/5/d1/0");
      List<String> items = new ArrayList<>();
      for (Row row : oldPool.query("SELECT item_key FROM sync_outbox ORDER BY sync_id").execute().await()) {
        items.add(row.getString(0));
      }
      assertThat(items).containsExactly("alice|receipt|1");
    });
  }

  /** Runs {@code steps} on a database of its own, migrated to today's schema, closed after. */
  private static void onMigratedDatabase(Consumer<Pool> steps) {
    TestDatabase old = TestDatabase.create(vertx);
    try {
      Database.prepare(vertx, old.config()).await();
      Pool oldPool = old.pool();
      try {
        steps.accept(oldPool);
      } finally {
        oldPool.close().await();
      }
    } finally {
      old.close();
    }
  }

  private static void routes(String login, String... servers) {
    pool.preparedQuery("INSERT INTO user_card (login, public_key, version, card_json, updated_at_ms)"
        + " VALUES ($1, '\\x00', 1, '{}', 0)").execute(Tuple.of(login)).await();
    insertRoutes(login, servers);
  }

  private static void insertRoutes(String login, String... servers) {
    for (int i = 0; i < servers.length; i++) {
      pool.preparedQuery("INSERT INTO user_access_servers_current (login, position, server_login, url)"
          + " VALUES ($1, $2, $3, $4)").execute(Tuple.of(login, (short) i, servers[i], "ws://127.0.0.1:" + (i + 1)
          + "/ws")).await();
    }
  }

  /** What a card's transaction does: replace the routes, then let the queue follow them. */
  private static void changeRoutes(String login, String... servers) {
    pool.withTransaction(conn -> conn.preparedQuery("DELETE FROM user_access_servers_current WHERE login = $1")
        .execute(Tuple.of(login))
        .compose(v -> {
          List<Tuple> rows = new ArrayList<>();
          for (int i = 0; i < servers.length; i++) {
            rows.add(Tuple.of(login, (short) i, servers[i], "ws://127.0.0.1:" + (i + 1) + "/ws"));
          }
          return conn.preparedQuery("INSERT INTO user_access_servers_current (login, position, server_login, url)"
              + " VALUES ($1, $2, $3, $4)").executeBatch(rows);
        })
        .compose(v -> sync.followRoutes(conn, login))).await();
  }

  private static CopyWrite incoming(String owner, String baseKey, boolean synced) {
    return CopyWrite.incoming(new CopyKey(owner, baseKey), "bob", 7, 0, baseKey.getBytes(StandardCharsets.UTF_8),
        synced, null);
  }

  private static CopyWrite outgoing(String owner, String baseKey) {
    return new CopyWrite(new CopyKey(owner, baseKey), DmKind.OUTGOING, "bob", 7, 0, new byte[] {2}, new byte[] {1},
        new DeliveryPlan(DeliveryState.DELIVERED, 7, 1, null, 0), false);
  }

  private static void store(CopyWrite... writes) {
    assertThat(copies.storeCopies(List.of(writes), 7).await()).hasSize(writes.length);
  }

  /** The queue rows of {@code sibling} in syncId order, as owner/key/lane. */
  private static List<String> queued(String sibling) {
    List<String> rows = new ArrayList<>();
    for (Row row : pool.preparedQuery("SELECT owner, item_key, settings FROM sync_queue WHERE sibling = $1"
        + " ORDER BY sync_id").execute(Tuple.of(sibling)).await()) {
      rows.add(row.getString(0) + "/" + row.getString(1) + "/" + (row.getBoolean(2) ? "settings" : "dm"));
    }
    return rows;
  }

  private static List<Long> syncIds(String owner) {
    List<Long> ids = new ArrayList<>();
    for (Row row : pool.preparedQuery("SELECT sync_id FROM sync_outbox WHERE owner = $1"
        + " UNION SELECT sync_id FROM sync_queue WHERE owner = $1 ORDER BY sync_id")
        .execute(Tuple.of(owner)).await()) {
      ids.add(row.getLong(0));
    }
    return ids;
  }

  private static long count(String sql) {
    return pool.query(sql).execute().await().iterator().next().getLong(0);
  }
}
