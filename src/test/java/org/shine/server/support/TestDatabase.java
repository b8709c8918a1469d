package org.shine.server.support;

import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlClient;
import java.util.Locale;
import java.util.UUID;
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

  @Override
  public void close() {
    admin(vertx, db, "DROP DATABASE IF EXISTS " + db.database() + " WITH (FORCE)");
  }

  private static void admin(Vertx vertx, AppConfig.Db db, String sql) {
    SqlClient client = PgBuilder.client().with(Database.poolOptions(1))
        .connectingTo(Database.connectOptions(db.withDatabase("postgres"))).using(vertx).build();
    try {
      client.query(sql).execute().await();
    } finally {
      client.close().await();
    }
  }

  private static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }
}
