package org.shine.server.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.support.TestDatabase;

/** {@link Database#openConnections}: the connections a node opens at start, before {@code /ready}. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class OpenConnectionsIT {

  @Test
  @DisplayName("opens that many connections at once and keeps them open, idle in the pool")
  void opensAndKeeps(Vertx vertx) throws Exception {
    try (TestDatabase database = TestDatabase.create(vertx)) {
      Pool pool = PgBuilder.pool().with(Database.poolOptions(8)).with(Database.netOptions(database.config()))
          .connectingTo(Database.connectOptions(database.config())).using(vertx).build();
      Pool counter = database.pool();
      try {
        // GIVEN a pool that has not been asked for anything: it has no connection
        assertThat(backends(counter, database)).isZero();

        // WHEN four are opened
        Database.openConnections(pool, 4).await(20, TimeUnit.SECONDS);

        // THEN four backends serve the pool, and they stay after being given back
        assertThat(pool.size()).isEqualTo(4);
        assertThat(backends(counter, database)).isEqualTo(4);
      } finally {
        pool.close().await();
        counter.close().await();
      }
    }
  }

  @Test
  @DisplayName("a database that refuses connections does not fail it: the pool connects on demand later")
  void refusedIsNotAFailure(Vertx vertx) throws Exception {
    try (TestDatabase database = TestDatabase.create(vertx)) {
      Pool pool = PgBuilder.pool().with(Database.poolOptions(4)).with(Database.netOptions(database.config()))
          .connectingTo(Database.connectOptions(database.config())).using(vertx).build();
      try {
        database.refuseConnections();
        assertThat(Database.openConnections(pool, 2).await(20, TimeUnit.SECONDS)).isNull();
        database.allowConnections();
        assertThat(pool.query("SELECT 1").execute().await(20, TimeUnit.SECONDS).size()).isEqualTo(1);
      } finally {
        database.allowConnections();
        pool.close().await();
      }
    }
  }

  /** Backends connected to the test's database, but for the counting connection itself. */
  private static long backends(Pool counter, TestDatabase database) throws Exception {
    return counter.query("SELECT count(*) FROM pg_stat_activity WHERE datname = '" + database.config().database()
        + "' AND pid <> pg_backend_pid()").execute().await(20, TimeUnit.SECONDS).iterator().next().getLong(0);
  }
}
