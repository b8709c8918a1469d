package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * SQL of the two-server sync (PROTOCOL §8): outbox pages for a sibling, ACKs, resets and lag (the settings
 * themselves are {@link SettingsRepository}'s). A sibling only ever sees and ACKs items of owners whose current
 * routes list both it and this server (PROTOCOL §6a).
 */
public final class SyncRepository {
  /** Item types of {@code sync_outbox}. */
  public static final int PAIR = 1;
  public static final int INCOMING = 2;
  public static final int RECEIPT = 3;
  public static final int TOMBSTONE = 4;
  public static final int SETTING = 5;

  /* owners whose current routes list both the puller ($1) and this server ($3) */
  private static final String SHARED_OWNERS =
      "SELECT o.login FROM user_access_servers_current o WHERE o.server_login = $1 AND EXISTS (SELECT 1 FROM"
          + " user_access_servers_current m WHERE m.login = o.login AND m.server_login = $3)";
  private static final String SHARED_ROUTE =
      " AND EXISTS (SELECT 1 FROM user_access_servers_current m WHERE m.login = r.login AND m.server_login = $3)";
  /*
   * A pair the owner's sibling has acknowledged by ReceiveOutcomingMessage (the forward of seed §4 step 7) needs no
   * sync: its outbox item (type 1) is marked synced, for a batch of forwards at once. This update and the ACK below
   * find each row by a key probe and update it through its ctid: their cost follows the batch, never the backlog (a
   * cached plan made while the table was small could otherwise scan it).
   */
  private static final String MARK_FORWARDED =
      "UPDATE sync_outbox o SET synced = true"
          + " FROM (SELECT (SELECT x.ctid FROM sync_outbox x WHERE x.owner = f.owner AND x.item_type = " + PAIR
          + " AND x.item_key = f.base_key AND x.revision = f.revision) AS tid"
          + " FROM unnest($1::text[], $2::text[], $3::int8[]) AS f(owner, base_key, revision)) f"
          + " WHERE o.ctid = f.tid AND NOT o.synced";
  private static final String ACK =
      "UPDATE sync_outbox o SET synced = true"
          + " FROM (SELECT (SELECT x.ctid FROM sync_outbox x WHERE x.sync_id = a.id) AS tid"
          + " FROM unnest($2::int8[]) AS a(id)) a"
          + " WHERE o.ctid = a.tid AND NOT o.synced AND o.owner IN (" + SHARED_OWNERS + ")";
  /*
   * A page walks each shared owner's unsynced items after $4 through the partial index sync_outbox_unsynced
   * (owner, sync_id) and merges them by sync_id, so its cost follows the page size rather than the backlog (or the
   * items before $4 a puller could not store); the blobs are joined to the chosen rows only.
   */
  static final String DM_PAGE =
      "WITH page AS (SELECT o.sync_id, o.owner, o.item_type, o.item_key FROM user_access_servers_current r"
          + " CROSS JOIN LATERAL (SELECT x.sync_id, x.owner, x.item_type, x.item_key FROM sync_outbox x"
          + " WHERE x.owner = r.login AND NOT x.synced AND x.sync_id > $4 AND x.item_type IN (1, 2, 3, 4)"
          + " ORDER BY x.sync_id LIMIT $2) o"
          + " WHERE r.server_login = $1" + SHARED_ROUTE + " ORDER BY o.sync_id LIMIT $2)"
          + " SELECT p.sync_id, p.owner, p.item_type, COALESCE(m.blob, s.blob) AS blob, m.pair_blob FROM page p"
          + " LEFT JOIN dm_message m ON p.item_type IN (1, 2) AND m.owner = p.owner AND m.base_key = p.item_key"
          + " LEFT JOIN dm_signal s ON p.item_type IN (3, 4) AND s.owner = p.owner AND s.signal_key = p.item_key"
          + " WHERE m.owner IS NOT NULL OR s.owner IS NOT NULL ORDER BY p.sync_id";
  static final String SETTINGS_PAGE =
      "WITH page AS (SELECT o.sync_id, o.owner, o.item_key FROM user_access_servers_current r"
          + " CROSS JOIN LATERAL (SELECT x.sync_id, x.owner, x.item_key FROM sync_outbox x"
          + " WHERE x.owner = r.login AND NOT x.synced AND x.sync_id > $4 AND x.item_type = 5"
          + " ORDER BY x.sync_id LIMIT $2) o"
          + " WHERE r.server_login = $1" + SHARED_ROUTE + " ORDER BY o.sync_id LIMIT $2)"
          + " SELECT p.sync_id, p.owner, s.key, s.value_json, s.updated_at_ms FROM page p"
          + " JOIN user_setting s ON s.owner = p.owner AND s.key = p.item_key ORDER BY p.sync_id";
  private static final String MARK_UNSYNCED =
      "UPDATE sync_outbox SET synced = false WHERE owner = $1 AND synced";
  private static final String LAG =
      "SELECT count(*), min(created_at_ms) FROM sync_outbox WHERE NOT synced AND owner IN ("
          + SHARED_OWNERS.replace("$3", "$2") + ")";
  private static final String SIBLINGS =
      "SELECT DISTINCT other.server_login, other.url FROM user_access_servers_current mine"
          + " JOIN user_access_servers_current other ON other.login = mine.login AND other.server_login <> $1"
          + " WHERE mine.server_login = $1";

  private final Pool pool;
  private final String self;

  /** {@code self}: this server's serverLogin. */
  public SyncRepository(Pool pool, String self) {
    this.pool = Objects.requireNonNull(pool);
    this.self = Objects.requireNonNull(self);
  }

  /** Marks the given items of owners shared with {@code puller} as synced; answers how many flipped. */
  public Future<Integer> ack(String puller, List<Long> syncIds) {
    if (syncIds.isEmpty()) {
      return Future.succeededFuture(0);
    }
    return pool.preparedQuery(ACK).execute(Tuple.tuple(List.of(puller, syncIds.toArray(new Long[0]), self)))
        .map(rows -> rows.rowCount());
  }

  /** Marks the outbox items of pairs the owner's sibling has stored by forward; answers how many changed. */
  public Future<Integer> markForwarded(List<ForwardedPair> pairs) {
    String[] owners = new String[pairs.size()];
    String[] baseKeys = new String[pairs.size()];
    Long[] revisions = new Long[pairs.size()];
    for (int i = 0; i < pairs.size(); i++) {
      owners[i] = pairs.get(i).owner();
      baseKeys[i] = pairs.get(i).baseKey();
      revisions[i] = pairs.get(i).revision();
    }
    return pool.preparedQuery(MARK_FORWARDED).execute(Tuple.tuple(List.of(owners, baseKeys, revisions)))
        .map(rows -> rows.rowCount());
  }

  /** One pair revision of {@code owner} that its sibling has stored. */
  public record ForwardedPair(String owner, String baseKey, long revision) {
  }

  /**
   * The oldest unsynced DM items (pairs, incoming copies, receipts, tombstones) after {@code afterSyncId} of owners
   * shared with {@code puller}.
   */
  public Future<List<DmItem>> dmPage(String puller, long afterSyncId, int limit) {
    return pool.preparedQuery(DM_PAGE).execute(Tuple.of(puller, limit, self, afterSyncId)).map(rows -> {
      List<DmItem> items = new ArrayList<>(rows.size());
      for (Row row : rows) {
        Buffer pair = row.getBuffer("pair_blob");
        items.add(new DmItem(row.getLong("sync_id"), row.getString("owner"), row.getShort("item_type"),
            row.getBuffer("blob").getBytes(), pair == null ? null : pair.getBytes()));
      }
      return items;
    });
  }

  /** The oldest unsynced settings items after {@code afterSyncId} of owners shared with {@code puller}. */
  public Future<List<SettingItem>> settingsPage(String puller, long afterSyncId, int limit) {
    return pool.preparedQuery(SETTINGS_PAGE).execute(Tuple.of(puller, limit, self, afterSyncId)).map(rows -> {
      List<SettingItem> items = new ArrayList<>(rows.size());
      for (Row row : rows) {
        items.add(new SettingItem(row.getLong("sync_id"), row.getString("owner"), row.getString("key"),
            row.getString("value_json"), row.getLong("updated_at_ms")));
      }
      return items;
    });
  }

  /** Sets every outbox item of {@code owner} (settings and DM) back to unsynced; answers how many. */
  public Future<Integer> markAllUnsynced(String owner) {
    return pool.preparedQuery(MARK_UNSYNCED).execute(Tuple.of(owner)).map(rows -> rows.rowCount());
  }

  /** Unsynced items owed to {@code sibling} and the creation time of the oldest (null when none). */
  public Future<Lag> lag(String sibling) {
    return pool.preparedQuery(LAG).execute(Tuple.of(sibling, self)).map(rows -> {
      Row row = rows.iterator().next();
      return new Lag(row.getLong(0), row.getLong(1));
    });
  }

  /** The other access servers of the users this server serves. */
  public Future<List<Sibling>> siblings(String me) {
    return pool.preparedQuery(SIBLINGS).execute(Tuple.of(me)).map(rows -> {
      List<Sibling> siblings = new ArrayList<>();
      for (Row row : rows) {
        siblings.add(new Sibling(row.getString(0), row.getString(1)));
      }
      return siblings;
    });
  }

  /**
   * One DM outbox item of type {@code PAIR} ({@code blob} outgoing, {@code pairBlob} incoming), {@code INCOMING},
   * {@code RECEIPT} or {@code TOMBSTONE} (one blob).
   */
  public record DmItem(long syncId, String owner, int type, byte[] blob, byte[] pairBlob) {
    public boolean pair() {
      return type == PAIR;
    }

    /** The wire name of the type. */
    public String typeName() {
      return switch (type) {
        case PAIR -> "pair";
        case INCOMING -> "incoming";
        case RECEIPT -> "receipt";
        default -> "tombstone";
      };
    }
  }

  /** One settings outbox item, with the setting's current value. */
  public record SettingItem(long syncId, String owner, String key, String valueJson, long updatedAtMs) {
  }

  /** Items not yet ACKed by a sibling. */
  public record Lag(long unsynced, Long oldestCreatedAtMs) {
  }

  /** A server sharing users with this one. */
  public record Sibling(String serverLogin, String url) {
  }
}
