package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.shine.server.config.AppConfig;

/**
 * SQL of user settings ({@code user_setting}, last writer wins): a user's reads and writes, and a sibling's writes
 * pulled by sync. Every write that lands also records its outbox item ({@code sync_outbox}, type
 * {@link SyncRepository#SETTING}) in the same statement: unsynced for a local write (with its {@code sync_queue} rows),
 * synced for a sibling's.
 *
 * <p>Quotas per owner (PROTOCOL §13, {@code quotas.settingsCount} and {@code quotas.settingsBytes}, the bytes of keys
 * and values as stored): a write that would take the owner's count or bytes above its quota, and above what the owner
 * holds now, fails with {@link QuotaExceededException} (so replacing a value by a smaller one is always allowed);
 * a sibling's write may go up to twice the quotas (the two servers' writes together). Each write checks and writes
 * under a lock of its owner's settings, so two concurrent writes never both pass a quota.
 */
public final class SettingsRepository {
  /* key order is code point order (COLLATE "C"), the same for every database and for afterKey */
  private static final String PAGE =
      "SELECT key, value_json FROM user_setting WHERE owner = $1 AND ($2::text IS NULL OR key COLLATE \"C\" > $2)"
          + " ORDER BY key COLLATE \"C\" LIMIT $3";
  private static final String LOCK_OWNER = "SELECT pg_advisory_xact_lock(hashtext('user_setting:' || $1))";
  /* what the owner holds, what the key holds now, what the write would bring, and whether the stored value wins */
  private static final String USAGE =
      "SELECT count(*), coalesce(sum(octet_length(key) + octet_length(value_json)), 0),"
          + " max(CASE WHEN key = $2 THEN octet_length(key) + octet_length(value_json) END),"
          + " octet_length($2::text) + octet_length($3::text),"
          + " coalesce(bool_or(key = $2 AND (updated_at_ms, value_json) >= ($4::bigint, $3::text)), false)"
          + " FROM user_setting WHERE owner = $1";
  /* a local write always wins over what is stored: its time is at least one past the stored time */
  private static final String SET_LOCAL =
      "WITH written AS (INSERT INTO user_setting AS s (owner, key, value_json, updated_at_ms) VALUES ($1, $2, $3, $4)"
          + " ON CONFLICT (owner, key) DO UPDATE SET value_json = EXCLUDED.value_json,"
          // LEAST keeps the + 1 from overflowing whatever is stored
          + " updated_at_ms = GREATEST(EXCLUDED.updated_at_ms, LEAST(s.updated_at_ms, 9223372036854775806) + 1)"
          + " RETURNING owner, key, updated_at_ms),"
          + " outbox AS (INSERT INTO sync_outbox (owner, item_type, item_key, revision, synced, created_at_ms)"
          + " SELECT owner, 5, key, updated_at_ms, false, $4 FROM written ON CONFLICT DO NOTHING"
          + " RETURNING sync_id, owner, item_type, item_key, created_at_ms)"
          + SyncQueueSql.queue("SELECT sync_id, owner, item_type, item_key, created_at_ms FROM outbox", "$5")
          + " SELECT updated_at_ms FROM written";
  private static final String QUOTA_COUNT = "quotas.settingsCount";
  private static final String QUOTA_BYTES = "quotas.settingsBytes";
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

  /** How far past the quotas a sibling's writes may take an owner. */
  static final int SYNCED_FACTOR = 2;
  private final Pool pool;
  private final AppConfig.Quotas quotas;
  private final String self;

  /** {@code self}: this server's serverLogin (a local write is owed to its owner's other routes). */
  public SettingsRepository(Pool pool, AppConfig.Quotas quotas, String self) {
    this.pool = Objects.requireNonNull(pool);
    this.quotas = Objects.requireNonNull(quotas);
    this.self = Objects.requireNonNull(self);
  }

  /**
   * Up to {@code limit} of {@code owner}'s settings whose keys follow {@code afterKey} (null: from the first), in
   * key order (Unicode code points).
   */
  public Future<List<Setting>> page(String owner, String afterKey, int limit) {
    return pool.preparedQuery(PAGE).execute(Tuple.of(owner, afterKey, limit)).map(rows -> {
      List<Setting> settings = new ArrayList<>(rows.size());
      for (Row row : rows) {
        settings.add(new Setting(row.getString(0), row.getString(1)));
      }
      return settings;
    });
  }

  /** A user's own write, within the quotas; answers the time it is stored under. */
  public Future<Long> setLocal(String owner, String key, String valueJson, long nowMs) {
    return pool.withTransaction(conn -> usage(conn, owner, key, valueJson, Long.MAX_VALUE)
        .compose(usage -> {
          check(owner, usage, 1);
          return conn.preparedQuery(SET_LOCAL).execute(Tuple.of(owner, key, valueJson, nowMs, self));
        })
        .map(rows -> rows.iterator().next().getLong(0)));
  }

  /**
   * A sibling's write, kept only if it is the later one, within twice the quotas; answers whether it was kept. A
   * write that loses to the stored value changes nothing and so passes any quota.
   */
  public Future<Boolean> applySynced(String owner, String key, String valueJson, long updatedAtMs, long nowMs) {
    return pool.withTransaction(conn -> usage(conn, owner, key, valueJson, updatedAtMs)
        .compose(usage -> {
          if (usage.storedWins()) {
            return Future.succeededFuture(false);
          }
          check(owner, usage, SYNCED_FACTOR);
          return conn.preparedQuery(APPLY_SYNCED).execute(Tuple.of(owner, key, valueJson, updatedAtMs, nowMs))
              .map(rows -> rows.iterator().next().getLong(0) > 0);
        }));
  }

  /** Locks {@code owner}'s settings for the rest of the transaction, then reads its usage and the key's. */
  private static Future<Usage> usage(SqlConnection conn, String owner, String key, String valueJson,
      long updatedAtMs) {
    return conn.preparedQuery(LOCK_OWNER).execute(Tuple.of(owner))
        .compose(v -> conn.preparedQuery(USAGE).execute(Tuple.of(owner, key, valueJson, updatedAtMs)))
        .map(rows -> {
          Row row = rows.iterator().next();
          Long stored = row.getLong(2);
          return new Usage(row.getLong(0), row.getLong(1), stored, row.getLong(3), row.getBoolean(4));
        });
  }

  private void check(String owner, Usage usage, int factor) {
    long count = usage.count() + (usage.keyBytes() == null ? 1 : 0);
    long bytes = usage.bytes() - (usage.keyBytes() == null ? 0 : usage.keyBytes()) + usage.newBytes();
    long countQuota = (long) quotas.settingsCount() * factor;
    long bytesQuota = quotas.settingsBytes() * factor;
    String beyond = factor == 1 ? "" : " (" + factor + "x for settings from the sibling)";
    if (count > usage.count() && count > countQuota) {
      throw new QuotaExceededException(QUOTA_COUNT, QUOTA_COUNT + ": " + owner + " keeps " + usage.count()
          + " settings here, the most allowed is " + countQuota + beyond + "; replace one instead of adding one");
    }
    if (bytes > usage.bytes() && bytes > bytesQuota) {
      throw new QuotaExceededException(QUOTA_BYTES, QUOTA_BYTES + ": this write would take " + owner
          + "'s settings to " + bytes + " bytes of keys and values, the most allowed is " + bytesQuota + beyond
          + " (" + usage.bytes() + " stored now)");
    }
  }

  /** One setting: its key and its value as JSON text. */
  public record Setting(String key, String valueJson) {
  }

  /**
   * An owner's settings now: how many, their bytes, the bytes of the key written (null when it is new), the bytes the
   * write brings, and whether the stored value wins over it (last writer wins, for a sibling's write).
   */
  private record Usage(long count, long bytes, Long keyBytes, long newBytes, boolean storedWins) {
  }
}
