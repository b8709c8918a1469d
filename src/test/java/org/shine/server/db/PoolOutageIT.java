package org.shine.server.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.config.AppConfig;
import org.shine.server.support.Eventually;
import org.shine.server.support.SlowStartProxy;
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

  @Test
  @DisplayName("under bursts over connections slow to start (100-300 ms each): every query and transaction "
      + "succeeds exactly once, and the pool keeps all four connections")
  void slowConnectionsCompleteOnce(Vertx vertx) throws Exception {
    try (TestDatabase database = TestDatabase.create(vertx)) {
      Vertx node = Vertx.vertx();
      List<Throwable> uncaught = new CopyOnWriteArrayList<>();
      node.exceptionHandler(uncaught::add);
      Random random = new Random(7);
      // GIVEN a database whose new connections take 100-300 ms to start, behind a pool of 4 whose connections are
      // closed after 50 ms idle, so that each burst below, started once the last one's are closed, connects anew
      try (SlowStartProxy proxy = SlowStartProxy.start(node, database.config().host(), database.config().port(),
          () -> 100 + random.nextInt(200))) {
        AppConfig.Db viaProxy = new AppConfig.Db("127.0.0.1", proxy.port(), database.config().database(),
            database.config().user(), database.config().password(), 4);
        Pool pool = PgBuilder.pool().with(Database.poolOptions(4).setMaxWaitQueueSize(1_000)
                .setIdleTimeout(50).setIdleTimeoutUnit(TimeUnit.MILLISECONDS))
            .with(Database.netOptions(viaProxy)).connectingTo(Database.connectOptions(viaProxy)).using(node).build();
        try {
          // WHEN bursts of queries and transactions run, waiting on connections that are still starting
          List<Future<?>> work = new ArrayList<>();
          AtomicInteger completions = new AtomicInteger();
          for (int round = 0; round < 10; round++) {
            List<Future<?>> burst = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
              Future<?> one = i % 2 == 0 ? pool.query("SELECT 1").execute()
                  : pool.withTransaction(conn -> conn.query("SELECT 1").execute());
              one.onComplete(ar -> completions.incrementAndGet());
              burst.add(one);
            }
            Future.join(burst).otherwiseEmpty().await(60, TimeUnit.SECONDS);
            work.addAll(burst);
            Eventually.until("the pool closes the idle connections of burst " + round, 20_000,
                () -> proxy.openConnections() == 0);
          }

          // THEN every one succeeded, exactly once, with nothing completed twice behind its back
          assertThat(work).allSatisfy(one -> assertThat(one.succeeded()).as("%s", one.cause()).isTrue());
          assertThat(completions.get()).isEqualTo(work.size());
          assertThat(uncaught).isEmpty();
          // and the pool still has its four connections: four transactions can be open at once
          List<Future<?>> open = new ArrayList<>();
          Promise<Void> release = Promise.promise();
          for (int i = 0; i < 4; i++) {
            open.add(pool.withTransaction(conn -> conn.query("SELECT 1").execute().compose(rows -> release.future())));
          }
          Eventually.until("four connections in use at once", 20_000,
              () -> count(database, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                  + " AND state = 'idle in transaction'") == 4);
          release.complete();
          Future.all(open).await(20, TimeUnit.SECONDS);
        } finally {
          pool.close().await();
        }
      } finally {
        node.close().await();
      }
    }
  }

  private static long count(TestDatabase database, String sql) {
    Pool pool = database.pool();
    try {
      return pool.query(sql).execute().await().iterator().next().getLong(0);
    } finally {
      pool.close().await();
    }
  }
}
