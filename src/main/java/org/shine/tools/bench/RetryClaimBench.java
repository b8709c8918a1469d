package org.shine.tools.bench;

import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.Locale;
import org.HdrHistogram.Histogram;
import org.shine.server.config.AppConfig;
import org.shine.server.config.ConfigLoader;
import org.shine.server.db.Database;
import org.shine.server.db.DeliveryRepository;

/**
 * {@code bench retry-claim}: the retry worker's database work per tick — claiming the due rows through the
 * partial index — timed beside a growing number of terminal rows, in a fresh database.
 */
final class RetryClaimBench {
  private RetryClaimBench() {
  }

  static int run(long terminal, int due, int rounds, String name) {
    AppConfig.Db db = ConfigLoader.parse("{}", System.getenv()).db().withDatabase(name);
    Vertx vertx = Vertx.vertx();
    try {
      Database.prepare(vertx, db).await();
      Pool pool = Database.sharedPool(vertx, db);
      pool.query("TRUNCATE dm_delivery").execute().await();
      System.out.printf(Locale.ROOT, "inserting %d terminal rows...%n", terminal);
      pool.preparedQuery("INSERT INTO dm_delivery (base_key, revision, owner, state, accepted_at_ms, attempts,"
          + " next_attempt_at_ms, updated_at_ms) SELECT 'bench|t|' || g, 0, 'bench',"
          + " CASE WHEN g % 10 = 0 THEN 'failed' ELSE 'delivered' END, 0, 1, NULL, 0"
          + " FROM generate_series(1, $1) g").execute(Tuple.of(terminal)).await();
      pool.preparedQuery("INSERT INTO dm_delivery (base_key, revision, owner, state, accepted_at_ms, attempts,"
          + " next_attempt_at_ms, updated_at_ms) SELECT 'bench|d|' || g, 0, 'bench', 'accepted', 0, 1, g, 0"
          + " FROM generate_series(1, $1) g").execute(Tuple.of((long) due)).await();
      pool.query("VACUUM ANALYZE dm_delivery").execute().await();
      DeliveryRepository deliveries = new DeliveryRepository(pool);
      Histogram micros = new Histogram(3);
      for (int round = 0; round < rounds; round++) {
        // re-arm: the due rows lose their lease so that every round claims all of them again
        pool.query("UPDATE dm_delivery SET lease_until_ms = NULL WHERE state = 'accepted'").execute().await();
        long start = System.nanoTime();
        int claimed = deliveries.claimDue(Long.MAX_VALUE / 4, 30_000, due).await().size();
        micros.recordValue(Math.max(1, (System.nanoTime() - start) / 1_000));
        if (claimed != due) {
          throw new IllegalStateException("claimed " + claimed + " of " + due);
        }
      }
      System.out.printf(Locale.ROOT, "claim of %d due rows beside %d terminal rows: median %.1f ms, min %.1f ms,"
          + " p90 %.1f ms, max %.1f ms over %d rounds%n", due, terminal, micros.getValueAtPercentile(50) / 1e3,
          micros.getMinValue() / 1e3, micros.getValueAtPercentile(90) / 1e3, micros.getMaxValue() / 1e3, rounds);
      pool.close().await();
      return 0;
    } finally {
      vertx.close().await();
    }
  }
}
