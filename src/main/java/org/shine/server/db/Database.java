package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClientOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.SqlConnection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.shine.server.config.AppConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Opens the server's PostgreSQL database: creates it when missing, migrates it, and hands out the shared pool. */
public final class Database {
  private static final Logger LOG = LoggerFactory.getLogger(Database.class);
  private static final String INVALID_CATALOG = "3D000";
  private static final String DUPLICATE_DATABASE = "42P04";
  private static final String POOL_NAME = "shine-pool";
  /** The {@code client_namespace} label of the shared pool's SQL client meters ({@code vertx_sql_*}). */
  public static final String SHARED_METRICS_NAME = POOL_NAME;
  /** The {@code client_namespace} label of the migrations' SQL client meters. */
  public static final String MIGRATION_METRICS_NAME = "shine-migrations";

  private Database() {
  }

  /** The node-wide pool: every verticle instance asks for it and gets the same connections. */
  public static Pool sharedPool(Vertx vertx, AppConfig.Db db) {
    PoolOptions poolOptions = poolOptions(db.poolSize())
        .setMaxWaitQueueSize(10_000)
        .setShared(true)
        .setName(POOL_NAME + ':' + db.host() + ':' + db.port() + '/' + db.database());
    return PgBuilder.pool().with(poolOptions).with(netOptions(db))
        .connectingTo(connectOptions(db).setMetricsName(SHARED_METRICS_NAME)).using(vertx).build();
  }

  /**
   * Options of every pool the server builds: at most {@code maxSize} connections and no acquisition timer.
   *
   * <p>In vertx-sql-client 5.0.7 the acquisition timer ({@code connectionTimeout}, 30 s by default) races the
   * acquisition: a query whose connect failed (the database refusing connections) is failed at once and the timer,
   * not cancelled on that path, fails it again when it fires; a connection handed out as the timer fires can go to a
   * request that already failed ("Promise already completed") and not come back to the pool (vertx-sql-client issues 1567
   * and 1706, fixed in 5.0.8, which the Vert.x 5.0.7 stack does not bring; not reproduced here, but the code is in
   * 5.0.7). So no pool here has that timer: waiting is bounded by the TCP connect timeout ({@link #netOptions}), the
   * statement timeout ({@link #connectOptions}) and the caller's own timeout, each of which ends the wait once.
   */
  public static PoolOptions poolOptions(int maxSize) {
    return new PoolOptions().setMaxSize(maxSize).setConnectionTimeout(0);
  }

  /**
   * As {@link #poolOptions(int)}, named: each pool of a server has a name of its own, so the pool meters of two
   * pools open at once (the shared pool and the health probe's) do not collide under Vert.x's default name.
   */
  public static PoolOptions poolOptions(String name, int maxSize) {
    return poolOptions(maxSize).setName(name);
  }

  /** A TCP connect to PostgreSQL gives up after {@code db.connectTimeoutMs}. */
  public static NetClientOptions netOptions(AppConfig.Db db) {
    return new NetClientOptions().setConnectTimeout((int) Math.min(Integer.MAX_VALUE, db.connectTimeoutMs()));
  }

  /** Every statement is cut at {@code db.statementTimeoutMs} (0: no limit). */
  public static PgConnectOptions connectOptions(AppConfig.Db db) {
    return connectOptions(db, db.statementTimeoutMs());
  }

  private static PgConnectOptions connectOptions(AppConfig.Db db, long statementTimeoutMs) {
    PgConnectOptions options = new PgConnectOptions()
        .setHost(db.host())
        .setPort(db.port())
        .setDatabase(db.database())
        .setUser(db.user())
        .setPassword(db.password())
        .setCachePreparedStatements(true)
        .setPipeliningLimit(256)
        .setReconnectAttempts(0);
    // keyed statements only: a cached plan made while a table was small must not become a hash or merge join over
    // a scan of the whole table as it grows (nested loops over the keys, each an index probe, stay cheap)
    options.addProperty("enable_hashjoin", "off");
    options.addProperty("enable_mergejoin", "off");
    // a run-time parameter in the startup message: PostgreSQL applies it to the whole session
    options.addProperty("statement_timeout", Long.toString(statementTimeoutMs));
    return options;
  }

  /**
   * Opens {@code connections} connections of {@code pool} at once, then gives them back: a pool connects only when
   * asked and keeps its idle connections, so the first requests after a start find them open instead of each waiting
   * for a PostgreSQL backend to start. Never fails: a connection that does not open is logged and left to the pool,
   * which connects on demand as before.
   */
  public static Future<Void> openConnections(Pool pool, int connections) {
    List<Future<SqlConnection>> opening = new ArrayList<>(connections);
    for (int i = 0; i < connections; i++) {
      opening.add(pool.getConnection());
    }
    // all held until all are open: a connection given back at once would be handed out again instead of a new one
    return Future.join(opening).transform(ar -> {
      int failed = 0;
      for (Future<SqlConnection> connection : opening) {
        if (connection.succeeded()) {
          connection.result().close();
        } else {
          failed++;
        }
      }
      if (failed > 0) {
        LOG.warn("{} of {} pool connections did not open at start; the pool opens them on demand", failed,
            connections);
      }
      return Future.<Void>succeededFuture();
    });
  }

  /**
   * Closes {@code pool} once none of its connections is still opening.
   *
   * <p>vertx-pg-client 5.0.7 (5.0.8 alike) can leave the close of a pool pending for ever when a connection of it is
   * still opening: closing the pool closes its TCP client, which closes that connection's channel through the
   * pipeline, and the PostgreSQL encoder takes that close without ever completing its promise; the client's close,
   * the pool's and at last {@code vertx.close()} never end. So as many connections as the pool has (open or
   * opening) are asked for first: each request is answered once a connection is open (or has failed to open), and all
   * are given back together. Work still holding a connection is not waited for beyond {@code settleMs}; the pool
   * closes then all the same.
   */
  public static Future<Void> close(Pool pool, long settleMs) {
    int places = pool.size();
    List<Future<SqlConnection>> asked = new ArrayList<>(places);
    for (int i = 0; i < places; i++) {
      asked.add(pool.getConnection());
    }
    // all held until all are answered: one given back at once would be handed out again before the others open
    return Future.join(asked)
        .timeout(settleMs, TimeUnit.MILLISECONDS)
        .transform(settled -> {
          // a connection that comes after the wait was given up goes back at once; the close ends it
          asked.forEach(connection -> connection.onSuccess(SqlConnection::close));
          return pool.close();
        });
  }

  /** Makes sure a fresh database of a test or tool exists and carries the current schema (see {@link Migrator}). */
  public static Future<Void> prepare(Vertx vertx, AppConfig.Db db) {
    return prepare(vertx, db, null);
  }

  /** Makes sure the database of {@code serverLogin} exists and carries the current schema. */
  public static Future<Void> prepare(Vertx vertx, AppConfig.Db db, String serverLogin) {
    return ensureDatabaseExists(vertx, db).compose(v -> {
      // migrations may rewrite big tables: no statement timeout for them
      Pool pool = PgBuilder.pool().with(poolOptions(MIGRATION_METRICS_NAME, 1)).with(netOptions(db))
          .connectingTo(connectOptions(db, 0).setMetricsName(MIGRATION_METRICS_NAME)).using(vertx).build();
      return new Migrator(pool, serverLogin).migrate().eventually(pool::close);
    });
  }

  private static Future<Void> ensureDatabaseExists(Vertx vertx, AppConfig.Db db) {
    SqlClient probe = PgBuilder.client().with(poolOptions("shine-database-check", 1)).connectingTo(connectOptions(db))
        .using(vertx).build();
    return probe.query("SELECT 1").execute()
        .<Void>mapEmpty()
        .eventually(probe::close)
        .recover(failure -> {
          if (failure instanceof PgException pg && INVALID_CATALOG.equals(pg.getSqlState())) {
            return createDatabase(vertx, db);
          }
          return Future.failedFuture(unreachable(db, failure));
        });
  }

  /**
   * A failure to reach PostgreSQL as one line naming where and which settings say so; a refusal by the database
   * itself (a wrong password, say) keeps its own message.
   */
  static Throwable unreachable(AppConfig.Db db, Throwable failure) {
    if (failure instanceof PgException) {
      return failure;
    }
    String why = failure.getMessage() == null ? failure.getClass().getSimpleName() : failure.getMessage();
    int detail = why.indexOf(": /");
    return new IllegalStateException("cannot reach PostgreSQL at " + db.host() + ":" + db.port() + " ("
        + (detail > 0 ? why.substring(0, detail) : why) + "); check db.host and db.port in the config, or"
        + " SHINE_DB_HOST and SHINE_DB_PORT, and that PostgreSQL is running", failure);
  }

  private static Future<Void> createDatabase(Vertx vertx, AppConfig.Db db) {
    LOG.info("database {} does not exist; creating it", db.database());
    String quoted = '"' + db.database().replace("\"", "\"\"") + '"';
    SqlClient admin = PgBuilder.client().with(poolOptions("shine-database-create", 1))
        .connectingTo(connectOptions(db.withDatabase("postgres"))).using(vertx).build();
    return admin.query("CREATE DATABASE " + quoted).execute()
        .<Void>mapEmpty()
        .eventually(admin::close)
        .recover(failure -> failure instanceof PgException pg && DUPLICATE_DATABASE.equals(pg.getSqlState())
            ? Future.succeededFuture() : Future.failedFuture(failure));
  }

}
