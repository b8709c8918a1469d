package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.SqlClient;
import org.shine.server.config.AppConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Opens the server's PostgreSQL database: creates it when missing, migrates it, and hands out the shared pool. */
public final class Database {
  private static final Logger LOG = LoggerFactory.getLogger(Database.class);
  private static final String INVALID_CATALOG = "3D000";
  private static final String DUPLICATE_DATABASE = "42P04";
  private static final String POOL_NAME = "shine-pool";

  private Database() {
  }

  /** The node-wide pool: every verticle instance asks for it and gets the same connections. */
  public static Pool sharedPool(Vertx vertx, AppConfig.Db db) {
    PoolOptions poolOptions = new PoolOptions()
        .setMaxSize(db.poolSize())
        .setMaxWaitQueueSize(10_000)
        .setShared(true)
        .setName(POOL_NAME + ':' + db.host() + ':' + db.port() + '/' + db.database());
    return PgBuilder.pool().with(poolOptions).connectingTo(connectOptions(db)).using(vertx).build();
  }

  public static PgConnectOptions connectOptions(AppConfig.Db db) {
    return new PgConnectOptions()
        .setHost(db.host())
        .setPort(db.port())
        .setDatabase(db.database())
        .setUser(db.user())
        .setPassword(db.password())
        .setCachePreparedStatements(true)
        .setPipeliningLimit(256)
        .setReconnectAttempts(0);
  }

  /** Makes sure the database exists and carries the current schema. */
  public static Future<Void> prepare(Vertx vertx, AppConfig.Db db) {
    return ensureDatabaseExists(vertx, db).compose(v -> {
      Pool pool = PgBuilder.pool().with(new PoolOptions().setMaxSize(1))
          .connectingTo(connectOptions(db)).using(vertx).build();
      return new Migrator(pool).migrate().eventually(pool::close);
    });
  }

  private static Future<Void> ensureDatabaseExists(Vertx vertx, AppConfig.Db db) {
    SqlClient probe = PgBuilder.client().connectingTo(connectOptions(db)).using(vertx).build();
    return probe.query("SELECT 1").execute()
        .<Void>mapEmpty()
        .eventually(probe::close)
        .recover(failure -> {
          if (failure instanceof PgException pg && INVALID_CATALOG.equals(pg.getSqlState())) {
            return createDatabase(vertx, db);
          }
          return Future.failedFuture(failure);
        });
  }

  private static Future<Void> createDatabase(Vertx vertx, AppConfig.Db db) {
    LOG.info("database {} does not exist; creating it", db.database());
    String quoted = '"' + db.database().replace("\"", "\"\"") + '"';
    SqlClient admin = PgBuilder.client().connectingTo(connectOptions(db.withDatabase("postgres"))).using(vertx).build();
    return admin.query("CREATE DATABASE " + quoted).execute()
        .<Void>mapEmpty()
        .eventually(admin::close)
        .recover(failure -> failure instanceof PgException pg && DUPLICATE_DATABASE.equals(pg.getSqlState())
            ? Future.succeededFuture() : Future.failedFuture(failure));
  }

}
