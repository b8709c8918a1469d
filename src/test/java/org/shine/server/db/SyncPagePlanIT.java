package org.shine.server.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.support.TestDatabase;

/**
 * A sync page after {@code afterSyncId} (PROTOCOL §8 v3) is one range of the queue's primary key from that syncId on:
 * its cost follows the page, not the unACKed items before it, the synced history or the owners the servers share.
 * The ACK, the forward mark and the queue's follow of a route change probe keys too.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class SyncPagePlanIT {
  private static Vertx vertx;
  private static TestDatabase db;
  private static Pool pool;
  private static long last;

  @BeforeAll
  static void backlog() {
    vertx = Vertx.vertx();
    db = TestDatabase.create(vertx);
    Database.prepare(vertx, db.config()).await();
    pool = db.pool();
    // GIVEN 1,000 users on s1 and s2, alice among them, 50,000 items of alice's owed to s2 (pairs, which are their
    // own queue rows, then settings, outbox items), then 200,000 synced copies of the others
    pool.query("INSERT INTO user_card (login, public_key, version, card_json, updated_at_ms)"
        + " SELECT CASE WHEN g = 0 THEN 'alice' ELSE 'u' || g END, '\\x00', 1, '{}', 0"
        + " FROM generate_series(0, 999) g").execute().await();
    pool.query("INSERT INTO user_access_servers_current (login, position, server_login, url)"
        + " SELECT login, p, CASE WHEN p = 0 THEN 's1' ELSE 's2' END, 'ws://127.0.0.1:' || (p + 1) || '/ws'"
        + " FROM user_card CROSS JOIN (VALUES (0::int2), (1::int2)) AS r(p)").execute().await();
    pool.query("INSERT INTO sync_queue (sibling, sync_id, owner, item_type, item_key, revision, created_at_ms)"
        + " SELECT 's2', nextval('sync_outbox_sync_id_seq'), 'alice', 1, 'k' || g, 0, 0"
        + " FROM generate_series(1, 25000) g").execute().await();
    pool.query("WITH items AS (INSERT INTO sync_outbox (owner, item_type, item_key, revision, synced, created_at_ms)"
        + " SELECT 'alice', 5, 'k' || g, 0, false, 0"
        + " FROM generate_series(25001, 50000) g RETURNING sync_id, owner, item_type, item_key, created_at_ms)"
        + " INSERT INTO sync_queue (sibling, sync_id, owner, item_type, item_key, created_at_ms)"
        + " SELECT 's2', sync_id, owner, item_type, item_key, created_at_ms FROM items").execute().await();
    pool.query("INSERT INTO dm_message (owner, base_key, direction, peer, created_at_ms, revision, blob, pair_blob,"
        + " stored_at_ms) SELECT 'alice', 'k' || g, 2, 'bob', 0, 0, '\\x01', '\\x02', 0"
        + " FROM generate_series(1, 25000) g").execute().await();
    pool.query("INSERT INTO dm_message (owner, base_key, direction, peer, created_at_ms, revision, blob, pair_blob,"
        + " stored_at_ms) SELECT 'u' || (g % 999 + 1), 'later' || g, 2, 'bob', 0, 0, '\\x01', '\\x02', 0"
        + " FROM generate_series(1, 200000) g").execute().await();
    pool.query("ANALYZE").execute().await();
    last = pool.query("SELECT max(sync_id) FROM sync_queue WHERE item_type = 1").execute().await()
        .iterator().next().getLong(0);
  }

  @AfterAll
  static void drop() {
    pool.close().await();
    db.close();
    vertx.close().await();
  }

  @Test
  @DisplayName("DM and settings pages after 50,000 unACKed items read the range of sync_queue's primary key, never"
      + " a table, and return the items after afterSyncId")
  void pageAfterABacklogReadsTheIndex() {
    Tuple dm = Tuple.of("s2", 201, "s1", last - 100, System.currentTimeMillis());
    Tuple settings = Tuple.of("s2", 201, "s1", last - 100);
    for (Map.Entry<String, Tuple> page : List.of(Map.entry(SyncRepository.DM_PAGE, dm),
        Map.entry(SyncRepository.SETTINGS_PAGE, settings))) {
      assertThat(plan(page.getKey(), page.getValue()))
          .contains("Index Scan using sync_queue_pkey on sync_queue")
          .doesNotContain("Seq Scan on sync_queue", "sync_outbox", "Seq Scan on user_access_servers_current");
    }
    SyncRepository repository = new SyncRepository(pool, "s1");
    assertThat(repository.dmPage("s2", last - 100, 200).await()).hasSize(100)
        .allSatisfy(item -> assertThat(item.syncId()).isGreaterThan(last - 100));
    assertThat(repository.dmPage("s2", 0, 200).await()).hasSize(200);
  }

  @Test
  @DisplayName("the ACK, the sibling-has mark, the release of held pairs and the queue's follow of a route change probe"
      + " keys, never scan a table")
  void ackAndForwardProbeKeys() {
    Long[] ids = {last - 2, last - 1, last};
    assertThat(plan(SyncRepository.ACK, Tuple.tuple(List.of("s2", ids, "s1", false))))
        .contains("sync_queue_pkey").doesNotContain("Seq Scan");
    assertThat(plan(SyncRepository.MARK_SIBLING_HAS, Tuple.tuple(List.of(new String[] {"alice", "alice"},
        new Short[] {1, 2}, new String[] {"k1", "k2"}, new Long[] {0L, 0L})))).contains("sync_queue_copy")
        .doesNotContain("Seq Scan");
    assertThat(plan(SyncRepository.RELEASE_HELD, Tuple.tuple(List.of(new String[] {"alice", "alice"},
        new Short[] {1, 1}, new String[] {"k1", "k2"}, new Long[] {0L, 0L})))).contains("sync_queue_copy")
        .doesNotContain("Seq Scan");
    // (alice owns every row of this queue: for her, reading the whole table is the right plan)
    assertThat(plan(SyncRepository.FOLLOW_ROUTES, Tuple.of("u5", "s1")))
        .contains("sync_queue_copy", "sync_queue_owner", "sync_outbox_owner_item_type_item_key_revision_key")
        .doesNotContain("Seq Scan");
  }

  private static String plan(String statement, Tuple params) {
    StringBuilder plan = new StringBuilder();
    for (Row row : pool.preparedQuery("EXPLAIN " + statement).execute(params).await()) {
      plan.append(row.getString(0)).append('\n');
    }
    return plan.toString();
  }
}
