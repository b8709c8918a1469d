package org.shine.server.support;

import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.util.Locale;
import java.util.UUID;
import java.util.function.Function;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;

/** A fresh, empty PostgreSQL database for one test class (host and credentials from SHINE_DB_* or defaults). */
public final class TestDatabase implements AutoCloseable {
  private final Vertx vertx;
  private final AppConfig.Db db;

  private TestDatabase(Vertx vertx, AppConfig.Db db) {
    this.vertx = vertx;
    this.db = db;
  }

  public static TestDatabase create(Vertx vertx) {
    String name = "shine_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16)
        .toLowerCase(Locale.ROOT);
    AppConfig.Db db = new AppConfig.Db(env("SHINE_DB_HOST", "127.0.0.1"),
        Integer.parseInt(env("SHINE_DB_PORT", "5432")), name, env("SHINE_DB_USER", "postgres"),
        env("SHINE_DB_PASSWORD", ""), 8);
    admin(vertx, db, "CREATE DATABASE " + name);
    return new TestDatabase(vertx, db);
  }

  public AppConfig.Db config() {
    return db;
  }

  /** A small pool on this database for assertions made directly in SQL. */
  public Pool pool() {
    return PgBuilder.pool().with(Database.poolOptions(2)).connectingTo(Database.connectOptions(db))
        .using(vertx).build();
  }

  /**
   * Makes this database, and only it, unavailable as an outage would: new connections are refused ("database is
   * not currently accepting connections", SQLSTATE 55000) and every open one is terminated (57P01). The shared
   * PostgreSQL server itself is never touched.
   */
  public void refuseConnections() {
    admin(vertx, db, "ALTER DATABASE " + db.database() + " ALLOW_CONNECTIONS false");
    admin(vertx, db, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + db.database()
        + "' AND pid <> pg_backend_pid()");
  }

  /** Ends {@link #refuseConnections()}. */
  public void allowConnections() {
    admin(vertx, db, "ALTER DATABASE " + db.database() + " ALLOW_CONNECTIONS true");
  }

  /**
   * What this database's sessions are doing, one line each (state, wait, age and statement), and the locks they
   * wait for, or why that could not be read: printed by a test whose pool does not close, so that a hang names its
   * statement.
   */
  public String activity() {
    try {
      return onAdmin(vertx, db, client -> {
        StringBuilder report = new StringBuilder();
        client.preparedQuery("SELECT pid, state, wait_event_type, wait_event, (now() - xact_start)::text AS xact_age,"
            + " (now() - state_change)::text AS state_age, pg_blocking_pids(pid)::text AS blocked_by,"
            + " left(query, 300) AS query"
            + " FROM pg_stat_activity WHERE datname = $1 ORDER BY pid").execute(Tuple.of(db.database()))
            .await().forEach(row -> report.append(row.toJson().encode()).append('\n'));
        client.preparedQuery("SELECT l.pid, l.locktype, l.mode, l.granted, l.relation::regclass::text AS relation"
            + " FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE d.datname = $1 AND NOT l.granted")
            .execute(Tuple.of(db.database()))
            .await().forEach(row -> report.append("waiting lock ").append(row.toJson().encode()).append('\n'));
        return report.toString();
      });
    } catch (RuntimeException unread) {
      return "(could not be read: " + unread + ")";
    }
  }

  @Override
  public void close() {
    admin(vertx, db, "DROP DATABASE IF EXISTS " + db.database() + " WITH (FORCE)");
  }

  private static void admin(Vertx vertx, AppConfig.Db db, String sql) {
    onAdmin(vertx, db, client -> client.query(sql).execute().await());
  }

  /** Runs {@code work} on a one-connection client of the server's {@code postgres} database, closed after it. */
  private static <T> T onAdmin(Vertx vertx, AppConfig.Db db, Function<SqlClient, T> work) {
    SqlClient client = PgBuilder.client().with(Database.poolOptions(1))
        .connectingTo(Database.connectOptions(db.withDatabase("postgres"))).using(vertx).build();
    try {
      return work.apply(client);
    } finally {
      client.close().await();
    }
  }

  private static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }
}
