package org.shine.server.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.support.TestDatabase;

/**
 * {@link Database#close}: a node's pools close at a stop whatever their connections are doing, never leaving the stop
 * (and {@code vertx.close()}) waiting for ever.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class PoolCloseIT {
  private static final int CONNECTIONS = 8;
  private static final int ROUNDS = 120;

  /**
   * The close of a plain {@code pool.close()} caught while connections are opening never ended in 5 of 300 such
   * rounds here (vertx-pg-client 5.0.7, see {@link Database#close}); a round that does not close within 10 s fails.
   * The race is random: without the fix this test failed in one of the two runs tried (at round 15).
   */
  @Test
  @DisplayName("a pool closed while its connections are still opening closes")
  void closedWhileOpening(Vertx vertx) throws Exception {
    try (TestDatabase database = TestDatabase.create(vertx)) {
      for (int round = 0; round < ROUNDS; round++) {
        Pool pool = pool(vertx, database);
        // more queries than places: every place starts to open a connection, one query waits for a place
        for (int i = 0; i <= CONNECTIONS; i++) {
          pool.query("SELECT 1").execute();
        }
        spin(ThreadLocalRandom.current().nextLong(4_000_000));

        try {
          Database.close(pool, 5_000).await(10, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
          throw new AssertionError("round " + round + ": the pool's close did not end", e);
        }
        assertThatThrownBy(() -> pool.query("SELECT 1").execute().await()).as("closed").hasMessageContaining("closed");
      }
    }
  }

  @Test
  @DisplayName("a connection held by work that does not end is not waited for beyond the settle time")
  void heldConnectionIsNotWaitedFor(Vertx vertx) throws Exception {
    try (TestDatabase database = TestDatabase.create(vertx)) {
      Pool pool = pool(vertx, database);
      SqlConnection held = pool.getConnection().await(20, TimeUnit.SECONDS);

      Future<Void> closed = Database.close(pool, 200);

      closed.await(10, TimeUnit.SECONDS);
      assertThat(closed.succeeded()).isTrue();
      assertThatThrownBy(() -> held.query("SELECT 1").execute().await()).as("the held connection ended with the pool")
          .isNotNull();
    }
  }

  @Test
  @DisplayName("a pool that never connected closes at once")
  void emptyPool(Vertx vertx) throws Exception {
    try (TestDatabase database = TestDatabase.create(vertx)) {
      Pool pool = pool(vertx, database);
      assertThat(pool.size()).isZero();

      Database.close(pool, 60_000).await(10, TimeUnit.SECONDS);

      assertThatThrownBy(() -> pool.query("SELECT 1").execute().await()).hasMessageContaining("closed");
    }
  }

  private static Pool pool(Vertx vertx, TestDatabase database) {
    return PgBuilder.pool().with(Database.poolOptions(CONNECTIONS)).with(Database.netOptions(database.config()))
        .connectingTo(Database.connectOptions(database.config())).using(vertx).build();
  }

  /** Lets the connections get that far: a busy wait, since a sleep of a few milliseconds is far coarser. */
  private static void spin(long nanos) {
    long end = System.nanoTime() + nanos;
    while (System.nanoTime() < end) {
      Thread.onSpinWait();
    }
  }
}
