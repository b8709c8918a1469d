package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * SQL of user settings ({@code user_setting}, last writer wins): a user's reads and writes, and a sibling's writes
 * pulled by sync. Every write that lands also records its outbox item ({@code sync_outbox}, type
 * {@link SyncRepository#SETTING}) in the same statement: unsynced for a local write, synced for a sibling's.
 */
public final class SettingsRepository {
  private static final String SETTINGS =
      "SELECT key, value_json FROM user_setting WHERE owner = $1 ORDER BY key";
  /* a local write always wins over what is stored: its time is at least one past the stored time */
  private static final String SET_LOCAL =
      "WITH written AS (INSERT INTO user_setting AS s (owner, key, value_json, updated_at_ms) VALUES ($1, $2, $3, $4)"
          + " ON CONFLICT (owner, key) DO UPDATE SET value_json = EXCLUDED.value_json,"
          // LEAST keeps the + 1 from overflowing whatever is stored
          + " updated_at_ms = GREATEST(EXCLUDED.updated_at_ms, LEAST(s.updated_at_ms, 9223372036854775806) + 1)"
          + " RETURNING owner, key, updated_at_ms),"
          + " outbox AS (INSERT INTO sync_outbox (owner, item_type, item_key, revision, synced, created_at_ms)"
          + " SELECT owner, 5, key, updated_at_ms, false, $4 FROM written ON CONFLICT DO NOTHING)"
          + " SELECT updated_at_ms FROM written";
  /* last writer wins; an equal time falls to the greater value, so both servers settle on the same one */
  private static final String APPLY_SYNCED =
      "WITH written AS (INSERT INTO user_setting AS s (owner, key, value_json, updated_at_ms) VALUES ($1, $2, $3, $4)"
          + " ON CONFLICT (owner, key) DO UPDATE SET value_json = EXCLUDED.value_json,"
          + " updated_at_ms = EXCLUDED.updated_at_ms"
          + " WHERE (s.updated_at_ms, s.value_json) < (EXCLUDED.updated_at_ms, EXCLUDED.value_json)"
          + " RETURNING owner, key, updated_at_ms),"
          + " outbox AS (INSERT INTO sync_outbox (owner, item_type, item_key, revision, synced, created_at_ms)"
          + " SELECT owner, 5, key, updated_at_ms, true, $5 FROM written ON CONFLICT DO NOTHING)"
          + " SELECT count(*) FROM written";

  private final Pool pool;

  public SettingsRepository(Pool pool) {
    this.pool = Objects.requireNonNull(pool);
  }

  /** All of {@code owner}'s settings: key → value as JSON text, by key. */
  public Future<Map<String, String>> settings(String owner) {
    return pool.preparedQuery(SETTINGS).execute(Tuple.of(owner)).map(rows -> {
      Map<String, String> settings = new LinkedHashMap<>();
      for (Row row : rows) {
        settings.put(row.getString(0), row.getString(1));
      }
      return settings;
    });
  }

  /** A user's own write; answers the time it is stored under. */
  public Future<Long> setLocal(String owner, String key, String valueJson, long nowMs) {
    return pool.preparedQuery(SET_LOCAL).execute(Tuple.of(owner, key, valueJson, nowMs))
        .map(rows -> rows.iterator().next().getLong(0));
  }

  /** A sibling's write, kept only if it is the later one; answers whether it was kept. */
  public Future<Boolean> applySynced(String owner, String key, String valueJson, long updatedAtMs, long nowMs) {
    return pool.preparedQuery(APPLY_SYNCED).execute(Tuple.of(owner, key, valueJson, updatedAtMs, nowMs))
        .map(rows -> rows.iterator().next().getLong(0) > 0);
  }
}
