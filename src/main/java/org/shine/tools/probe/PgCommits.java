package org.shine.tools.probe;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.shine.server.config.AppConfig;
import org.shine.server.config.ConfigLoader;
import org.shine.server.db.Database;

/**
 * Transactions ended ({@code xact_commit + xact_rollback} of {@code pg_stat_database}) in the named databases, read
 * over one connection to the {@code postgres} database at SHINE_DB_* (default 127.0.0.1:5432, user postgres).
 * PostgreSQL flushes a backend's counts about once a second, so a sample lags by up to a second on each side;
 * over a steady window of many seconds the two lags cancel out.
 */
public final class PgCommits {
  private static final String SQL = "SELECT datname, xact_commit + xact_rollback AS ended FROM pg_stat_database"
      + " WHERE datname = ANY($1)";
  private final Pool pool;
  private final List<String> databases;

  private PgCommits(Pool pool, List<String> databases) {
    this.pool = pool;
    this.databases = List.copyOf(databases);
  }

  /** A reader of {@code databases}' counts (none: every sample is empty and nothing connects). */
  public static PgCommits of(Vertx vertx, List<String> databases) {
    if (databases.isEmpty()) {
      return new PgCommits(null, databases);
    }
    AppConfig.Db db = ConfigLoader.parse("{}", System.getenv()).db().withDatabase("postgres");
    Pool pool = PgBuilder.pool().with(Database.poolOptions(1)).with(Database.netOptions(db))
        .connectingTo(Database.connectOptions(db)).using(vertx).build();
    return new PgCommits(pool, databases);
  }

  public List<String> databases() {
    return databases;
  }

  /** Transactions ended so far per database; a database that is not there is left out. */
  public Future<Map<String, Long>> sample() {
    if (pool == null) {
      return Future.succeededFuture(Map.of());
    }
    return pool.preparedQuery(SQL).execute(Tuple.of(databases.toArray(new String[0]))).map(rows -> {
      Map<String, Long> ended = new LinkedHashMap<>();
      for (Row row : rows) {
        ended.put(row.getString("datname"), row.getLong("ended"));
      }
      return ended;
    });
  }

  public Future<Void> close() {
    return pool == null ? Future.succeededFuture() : pool.close();
  }
}
