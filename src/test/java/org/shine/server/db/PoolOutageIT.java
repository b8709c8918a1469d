package org.shine.server.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.support.Eventually;
import org.shine.server.support.TestDatabase;

/** The server's pools while their database refuses connections (only the test's own database). */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class PoolOutageIT {

  @Test
  @DisplayName("a refused database fails each query and transaction once, as storage unavailable, and never "
      + "completes one twice later (no 'Promise already completed' from a pool timer)")
  void refusedConnectionsFailOnce(Vertx vertx) throws Exception {
    try (TestDatabase database = TestDatabase.create(vertx)) {
      Vertx node = Vertx.vertx();
      List<Throwable> uncaught = new CopyOnWriteArrayList<>();
      node.exceptionHandler(uncaught::add);
      Pool pool = PgBuilder.pool().with(Database.poolOptions(4).setMaxWaitQueueSize(1_000))
          .with(Database.netOptions(database.config())).connectingTo(Database.connectOptions(database.config()))
          .using(node).build();
      try {
        pool.query("SELECT 1").execute().await(10, TimeUnit.SECONDS);
        // GIVEN the database refuses connections and its backends are cut
        database.refuseConnections();

        // WHEN many queries and transactions run at once
        List<Future<?>> work = new ArrayList<>();
        List<Integer> completions = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 100; i++) {
          int n = i;
          Future<?> one = i % 2 == 0 ? pool.query("SELECT 1").execute()
              : pool.withTransaction(conn -> conn.query("SELECT 1").execute());
          one.onComplete(ar -> completions.add(n));
          work.add(one);
        }
        Future.join(work).otherwiseEmpty().await(30, TimeUnit.SECONDS);

        // THEN each failed once with storage trouble
        assertThat(work).allSatisfy(one -> {
          assertThat(one.failed()).isTrue();
          assertThat(StorageErrors.isUnavailable(one.cause())).as("%s", one.cause()).isTrue();
        });
        // and a later request still fails cleanly while nothing completes twice (5.0.7's acquisition timer would
        // fire here, 30 s by default, sooner when set)
        long until = System.currentTimeMillis() + 2_000;
        Eventually.until("two more seconds of refused queries", 10_000, () -> {
          pool.query("SELECT 1").execute().otherwiseEmpty().await();
          return System.currentTimeMillis() > until;
        });
        assertThat(completions).hasSize(100).doesNotHaveDuplicates();
        assertThat(uncaught).isEmpty();

        // and when the database returns, the same pool serves again
        database.allowConnections();
        Eventually.until("the pool connects again", 10_000,
            () -> pool.query("SELECT 1").execute().map(rows -> true).otherwise(false).await());
      } finally {
        database.allowConnections();
        pool.close().await();
        node.close().await();
      }
    }
  }
}
