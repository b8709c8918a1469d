package org.shine.tools.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;
import org.shine.server.config.AppConfig;
import org.shine.server.config.ConfigLoader;
import org.shine.server.db.Database;
import org.shine.server.db.DmRepository;
import org.shine.server.db.SyncRepository;
import org.shine.server.model.CopyKey;
import org.shine.server.model.CopyWrite;

/**
 * {@code bench sync-page}: the source's database work per DmSyncBatch and UserSettingsSyncBatch page (PROTOCOL §8)
 * timed beside a growing number of synced copies, in a fresh database. This server is {@code s1}, the puller
 * {@code s2}; {@code owners} users are routed to both, the synced history and the pending items are spread over
 * them. The pending items are written by the product's own statement (a batch of incoming copies, unsynced).
 */
final class SyncPageBench {
  private static final String SELF = "s1";
  private static final String SIBLING = "s2";
  private static final int WRITE_BATCH = 500;

  private SyncPageBench() {
  }

  static int run(long synced, int pending, int owners, int limit, int rounds, String name) {
    AppConfig.Db defaults = ConfigLoader.parse("{}", System.getenv()).db();
    // one connection, so that its buffer counts are the pages' own; no statement timeout: the bulk inserts of a
    // million items take longer than a request may
    AppConfig.Db db = new AppConfig.Db(defaults.host(), defaults.port(), name, defaults.user(), defaults.password(),
        1, defaults.connectTimeoutMs(), 0);
    Vertx vertx = Vertx.vertx();
    try {
      Database.prepare(vertx, db).await();
      Pool pool = Database.sharedPool(vertx, db);
      pool.query("TRUNCATE user_card, user_access_servers_current, sync_outbox, sync_queue, dm_message, user_setting")
          .execute().await();
      System.out.printf(Locale.ROOT, "%d owners on %s and %s, %d synced items, %d pending...%n", owners, SELF,
          SIBLING, synced, pending);
      pool.preparedQuery("INSERT INTO user_card (login, public_key, version, card_json, updated_at_ms)"
          + " SELECT 'u' || g, '\\x00', 1, '{}', 0 FROM generate_series(0, $1 - 1) g").execute(Tuple.of(owners))
          .await();
      pool.preparedQuery("INSERT INTO user_access_servers_current (login, position, server_login, url)"
          + " SELECT 'u' || g, p, CASE WHEN p = 0 THEN $2 ELSE $3 END,"
          + " CASE WHEN p = 0 THEN 'ws://127.0.0.1:1/ws' ELSE 'ws://127.0.0.1:2/ws' END"
          + " FROM generate_series(0, $1 - 1) g CROSS JOIN (VALUES (0::int2), (1::int2)) AS r(p)")
          .execute(Tuple.of(owners, SELF, SIBLING)).await();
      // the history: copies the sibling has ACKed long ago (a copy is its own sync item: a synced one has no queue
      // row, only its place in dm_message, which a page reads by key for the copies it offers)
      pool.preparedQuery("INSERT INTO dm_message (owner, base_key, direction, peer, created_at_ms, revision, blob,"
          + " stored_at_ms) SELECT 'u' || (g % $2), 'h' || g, 1, 'bob', 0, 0, '\\x01', 0"
          + " FROM generate_series(1, $1) g").execute(Tuple.of(synced, owners)).await();
      writePending(vertx, pool, pending, owners);
      pool.query("VACUUM ANALYZE").execute().await();
      SyncRepository outbox = new SyncRepository(pool, SELF);
      long buffers = buffers(pool);
      Histogram dm = time(rounds, () -> outbox.dmPage(SIBLING, 0, limit).map(List::size),
          Math.min(pending, limit));
      long dmBuffers = buffers(pool) - buffers;
      Histogram settings = time(rounds, () -> outbox.settingsPage(SIBLING, 0, limit).map(List::size), 0);
      long settingsBuffers = buffers(pool) - buffers - dmBuffers;
      report("DM page", limit, synced, pending, owners, rounds, dm, dmBuffers);
      report("settings page (none pending)", limit, synced, pending, owners, rounds, settings, settingsBuffers);
      pool.close().await();
      return 0;
    } finally {
      vertx.close().await();
    }
  }

  /** Incoming copies for the owners, unsynced, through the product's write statement. */
  private static void writePending(Vertx vertx, Pool pool, int pending, int owners) {
    DmRepository copies = new DmRepository(pool, SELF);
    for (int from = 0; from < pending; from += WRITE_BATCH) {
      List<CopyWrite> batch = new ArrayList<>();
      for (int i = from; i < Math.min(pending, from + WRITE_BATCH); i++) {
        batch.add(CopyWrite.incoming(new CopyKey("u" + (i % owners), "p" + i), "bob", 0, 0, new byte[] {1},
            false, null));
      }
      copies.storeCopies(batch, 0).await();
    }
  }

  /**
   * The buffers this database's backends have read or found in the cache so far: the connection's own counts are
   * flushed first, so the difference of two readings is what the statements between them touched (a cost the load of
   * the machine does not change).
   */
  private static long buffers(Pool pool) {
    pool.query("SELECT pg_stat_force_next_flush()").execute().await();
    return pool.query("SELECT blks_hit + blks_read FROM pg_stat_database WHERE datname = current_database()")
        .execute().await().iterator().next().getLong(0);
  }

  private static Histogram time(int rounds, Supplier<Future<Integer>> page, int expected) {
    Histogram micros = new Histogram(3);
    for (int round = 0; round < rounds; round++) {
      long start = System.nanoTime();
      int items = page.get().await();
      micros.recordValue(Math.max(1, (System.nanoTime() - start) / 1_000));
      if (items != expected) {
        throw new IllegalStateException("a page held " + items + " items, expected " + expected);
      }
    }
    return micros;
  }

  private static void report(String what, int limit, long synced, int pending, int owners, int rounds,
      Histogram micros, long buffers) {
    System.out.printf(Locale.ROOT, "%s (limit %d) beside %d synced items, %d pending, %d owners: median %.2f ms,"
        + " min %.2f ms, p90 %.2f ms, max %.2f ms over %d rounds; %d buffers a page%n", what, limit, synced, pending,
        owners, micros.getValueAtPercentile(50) / 1e3, micros.getMinValue() / 1e3,
        micros.getValueAtPercentile(90) / 1e3, micros.getMaxValue() / 1e3, rounds, buffers / rounds);
  }
}
