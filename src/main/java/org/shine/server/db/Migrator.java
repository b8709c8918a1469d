package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies the versioned scripts of {@code db/migration} (listed in order in {@code index.txt}) exactly once each,
 * inside one transaction under an advisory lock so that nodes starting together never race. The scripts read this
 * server's serverLogin as {@code current_setting('shine.server_login', true)} (empty when none is given: a fresh
 * database of a test or tool).
 */
public final class Migrator {
  private static final Logger LOG = LoggerFactory.getLogger(Migrator.class);
  private static final String ROOT = "/db/migration/";
  private static final Pattern NAME = Pattern.compile("V(\\d+)__([A-Za-z0-9_]+)\\.sql");
  private static final long LOCK_KEY = 0x5348694E45L;
  private final Pool pool;
  private final String serverLogin;

  /** Migrations for a fresh database, which owes nothing to any other server yet. */
  public Migrator(Pool pool) {
    this(pool, null);
  }

  /** Migrations for the database of {@code serverLogin} (null: see {@link #Migrator(Pool)}). */
  public Migrator(Pool pool, String serverLogin) {
    this.pool = pool;
    this.serverLogin = serverLogin;
  }

  public Future<Void> migrate() {
    List<String> scripts = readResource("index.txt").lines().map(String::trim).filter(l -> !l.isEmpty()).toList();
    return pool.withTransaction(conn -> conn.query("SET LOCAL client_min_messages = warning").execute()
        .compose(v -> conn.preparedQuery("SELECT pg_advisory_xact_lock($1)").execute(Tuple.of(LOCK_KEY)))
        .compose(v -> conn.preparedQuery("SELECT set_config('shine.server_login', $1, true)")
            .execute(Tuple.of(serverLogin == null ? "" : serverLogin)))
        .compose(v -> conn.query("CREATE TABLE IF NOT EXISTS schema_migration (version int PRIMARY KEY,"
            + " name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())").execute())
        .compose(v -> conn.query("SELECT version FROM schema_migration").execute())
        .compose(rows -> {
          Set<Integer> applied = new HashSet<>();
          for (Row row : rows) {
            applied.add(row.getInteger(0));
          }
          Future<Void> chain = Future.succeededFuture();
          for (String script : scripts) {
            chain = chain.compose(v -> applyIfNew(conn, script, applied));
          }
          return chain;
        }));
  }

  private Future<Void> applyIfNew(SqlConnection conn, String script, Set<Integer> applied) {
    Matcher m = NAME.matcher(script);
    if (!m.matches()) {
      return Future.failedFuture(new IllegalStateException("bad migration name " + script));
    }
    int version = Integer.parseInt(m.group(1));
    if (applied.contains(version)) {
      return Future.succeededFuture();
    }
    LOG.info("applying migration [version: {}, name: {}]", version, m.group(2));
    return conn.query(readResource(script)).execute()
        .compose(v -> conn.preparedQuery("INSERT INTO schema_migration (version, name) VALUES ($1, $2)")
            .execute(Tuple.of(version, m.group(2))))
        .mapEmpty();
  }

  private static String readResource(String name) {
    try (InputStream in = Migrator.class.getResourceAsStream(ROOT + name)) {
      if (in == null) {
        throw new IllegalStateException("missing migration resource " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
