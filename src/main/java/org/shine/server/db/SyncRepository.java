package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * SQL of the two-server sync (PROTOCOL §8): pages of the per-sibling queue ({@code sync_queue}), ACKs, the forward
 * mark, resets and the queue's part of a route change (the settings themselves are {@link SettingsRepository}'s;
 * what is owed per sibling, {@link OpsRepository}'s).
 * A DM copy is its own item: one queue row while it is owed (to its owner's sibling, or to nobody yet: {@code ''}),
 * written and replaced with the copy ({@link SyncQueueSql#queueCopies}) and deleted by the sibling's ACK; no row means
 * some sibling has the copy's current revision. Receipts, tombstones and settings are {@code sync_outbox} items, one
 * per revision, with one queue row per sibling they are owed to, written with the item ({@link SyncQueueSql#queue})
 * and deleted by that sibling's ACK; {@code sync_outbox.synced} says whether some sibling has the item. A sibling only
 * ever sees and ACKs items of owners whose current routes list both it and this server (PROTOCOL §6a): checked per
 * queue row, and with the route change the rows of a sibling an owner leaves go, or move to its new sibling for a
 * copy ({@link #followRoutes}).
 */
public final class SyncRepository {
  /** Item types of sync: a copy (a pair, an incoming copy) is its own queue row, the others are outbox items. */
  public static final int PAIR = 1;
  public static final int INCOMING = 2;
  public static final int RECEIPT = 3;
  public static final int TOMBSTONE = 4;
  public static final int SETTING = 5;

  /* the queue row's owner is routed to both the puller ($1) and this server ($3) */
  private static final String SHARED = SyncQueueSql.shared("$1", "$3");
  /*
   * The puller's ACK deletes its own rows (one primary-key probe each): a copy whose row is gone is synced. Outbox
   * items (receipts, tombstones, settings) are marked synced too: some sibling has them, so a sibling that replaces it
   * later is not owed them. Those are found by a key probe and updated through their ctid: the cost follows the
   * batch, never the backlog (a cached plan made while the table was small could otherwise scan it).
   */
  static final String ACK =
      "WITH acked AS (DELETE FROM sync_queue q WHERE q.sibling = $1 AND q.settings = $4 AND q.sync_id = ANY($2::int8[])"
          + " AND " + SHARED + " RETURNING q.sync_id, q.item_type),"
          + " marked AS (UPDATE sync_outbox o SET synced = true"
          + " FROM (SELECT (SELECT x.ctid FROM sync_outbox x WHERE x.sync_id = a.sync_id) AS tid FROM acked a"
          + " WHERE " + SyncQueueSql.outboxRow("a") + ") a"
          + " WHERE o.ctid = a.tid AND NOT o.synced)"
          + " SELECT count(*) FROM acked";
  /*
   * Copies the owner's sibling is known to hold need no sync: a pair it acknowledged by ReceiveOutcomingMessage (the
   * forward of seed §4 step 7), or a copy this server pulled from it and found already stored here (so the sibling
   * has what we have: that revision). Each copy's row goes unless it owes a newer revision (what the sibling has
   * replaces an older one), for a batch at once, each row found by a probe of its copy's key.
   */
  static final String MARK_SIBLING_HAS =
      "DELETE FROM sync_queue q USING (SELECT (SELECT y.ctid FROM sync_queue y WHERE y.owner = f.owner"
          + " AND y.item_key = f.item_key AND " + SyncQueueSql.copyRow("y") + " AND y.item_type = f.item_type"
          + " AND y.revision <= f.revision) AS tid"
          + " FROM unnest($1::text[], $2::int2[], $3::text[], $4::int8[]) AS f(owner, item_type, item_key, revision)) d"
          + " WHERE q.ctid = d.tid";
  /*
   * Bookkeeping whose loss only repeats idempotent work (an ACK or a mark lost in a crash: the item is sent once more
   * and stored as a repeat) commits without waiting for the WAL flush: never a stored copy, a delivery state a client
   * was told, or anything this server ACKed to another.
   */
  private static final String ASYNC_COMMIT = "SET LOCAL synchronous_commit TO OFF";
  /*
   * A page is one range of the queue's primary key, (puller, lane, syncId > $4) in syncId order, each row checked
   * for an owner routed to both servers: its cost follows the page size, never the history or the number of owners
   * the servers share. The blobs are joined to the chosen rows only.
   */
  static final String DM_PAGE =
      "WITH page AS (SELECT q.sync_id, q.owner, q.item_type, q.item_key FROM sync_queue q"
          + " WHERE q.sibling = $1 AND NOT q.settings AND q.sync_id > $4 AND q.visible_at_ms <= $5 AND " + SHARED
          + " ORDER BY q.sync_id LIMIT $2)"
          + " SELECT p.sync_id, p.owner, p.item_type, COALESCE(m.blob, s.blob) AS blob, m.pair_blob FROM page p"
          + " LEFT JOIN dm_message m ON p.item_type IN (1, 2) AND m.owner = p.owner AND m.base_key = p.item_key"
          + " LEFT JOIN dm_signal s ON p.item_type IN (3, 4) AND s.owner = p.owner AND s.signal_key = p.item_key"
          + " WHERE m.owner IS NOT NULL OR s.owner IS NOT NULL ORDER BY p.sync_id";
  static final String SETTINGS_PAGE =
      "WITH page AS (SELECT q.sync_id, q.owner, q.item_key FROM sync_queue q"
          + " WHERE q.sibling = $1 AND q.settings AND q.sync_id > $4 AND " + SHARED
          + " ORDER BY q.sync_id LIMIT $2)"
          + " SELECT p.sync_id, p.owner, s.key, s.value_json, s.updated_at_ms FROM page p"
          + " JOIN user_setting s ON s.owner = p.owner AND s.key = p.item_key ORDER BY p.sync_id";
  /*
   * every item of the owner back to unsynced, and owed again to each sibling ($2: this server): each copy's row made
   * anew (a new sync_id, so a sibling's cursor does not skip it), each outbox item flipped and queued; counted are the
   * items that were synced before (a copy without a row, an outbox item marked synced)
   */
  private static final String MARK_UNSYNCED =
      "WITH reset AS (UPDATE sync_outbox SET synced = false WHERE owner = $1 AND synced RETURNING sync_id)"
          + SyncQueueSql.oweCopiesAgain("SELECT m.owner, CASE WHEN m.direction = 2 THEN " + PAIR + " ELSE "
              + INCOMING + " END AS item_type, m.base_key AS item_key, m.revision, m.stored_at_ms AS created_at_ms,"
              + " 0::int8 AS visible_at_ms FROM dm_message m WHERE m.owner = $1", "$2")
          + SyncQueueSql.queue("SELECT sync_id, owner, item_type, item_key, created_at_ms FROM sync_outbox"
              + " WHERE owner = $1", "$2")
          + " SELECT (SELECT count(*) FROM reset) + (SELECT count(*) FROM copies WHERE was_synced)";
  /*
   * After the owner's routes changed ($2: this server): each copy still owed goes to the owner's sibling now (or to
   * nobody yet); the outbox items' rows of a server that is no longer its sibling go, and each sibling now is owed
   * the outbox items no sibling has yet (the owner's unsynced items, read through the owner's part of the outbox's
   * unique key: a route change is rare, an index entry less on every item written is not) — as the synced flag alone
   * decided before there was a queue.
   */
  static final String FOLLOW_ROUTES =
      "WITH moved AS (UPDATE sync_queue q SET sibling = s.sibling"
          + " FROM (SELECT " + SyncQueueSql.siblingOf("$1", "$2") + " AS sibling) s"
          + " WHERE q.owner = $1 AND " + SyncQueueSql.copyRow("q") + " AND q.sibling <> s.sibling),"
          + " gone AS (DELETE FROM sync_queue q WHERE q.owner = $1 AND " + SyncQueueSql.outboxRow("q")
          + " AND NOT COALESCE(" + SyncQueueSql.shared("q.sibling", "$2") + ", false))"
          + SyncQueueSql.queue("SELECT sync_id, owner, item_type, item_key, created_at_ms FROM sync_outbox"
              + " WHERE owner = $1 AND NOT synced", "$2")
          + " SELECT 1";
  /*
   * Pairs whose forward failed: their rows are offered at once instead of at the hold's end. As the sibling-has mark:
   * each copy's row found by its key (the row of that revision only: a newer one has a hold of its own).
   */
  static final String RELEASE_HELD =
      "UPDATE sync_queue q SET visible_at_ms = 0 FROM (SELECT (SELECT y.ctid FROM sync_queue y WHERE y.owner = f.owner"
          + " AND y.item_key = f.item_key AND " + SyncQueueSql.copyRow("y") + " AND y.revision = f.revision) AS tid"
          + " FROM unnest($1::text[], $2::int2[], $3::text[], $4::int8[]) AS f(owner, item_type, item_key, revision)) d"
          + " WHERE q.ctid = d.tid AND q.visible_at_ms > 0";
  /* one probe of the copy's row */
  private static final String OWES_PAIR =
      "SELECT EXISTS (SELECT 1 FROM sync_queue y WHERE y.owner = $2 AND y.item_key = $3"
          + " AND " + SyncQueueSql.copyRow("y") + " AND y.item_type = " + PAIR
          + " AND y.revision = $4 AND y.sibling = $1)";
  private static final String SIBLINGS = SyncQueueSql.siblings("$1");

  private final Pool pool;
  private final String self;
  private final Clock clock;

  /** {@code self}: this server's serverLogin; a page offers the rows visible by {@code clock}. */
  public SyncRepository(Pool pool, String self, Clock clock) {
    this.pool = Objects.requireNonNull(pool);
    this.self = Objects.requireNonNull(self);
    this.clock = Objects.requireNonNull(clock);
  }

  /** As above, on the system clock. */
  public SyncRepository(Pool pool, String self) {
    this(pool, self, Clock.systemUTC());
  }

  /**
   * Takes {@code puller}'s ACKs of items of {@code lane} (its rows of owners it shares with this server); answers how
   * many rows went.
   */
  public Future<Integer> ack(String puller, Lane lane, List<Long> syncIds) {
    if (syncIds.isEmpty()) {
      return Future.succeededFuture(0);
    }
    Tuple args = Tuple.tuple(List.of(puller, syncIds.toArray(new Long[0]), self, lane == Lane.SETTINGS));
    return bookkeeping(conn -> conn.preparedQuery(ACK).execute(args)
        .map(rows -> rows.iterator().next().getLong(0).intValue()));
  }

  /** One statement of bookkeeping in a transaction that commits asynchronously (see {@link #ASYNC_COMMIT}). */
  private <T> Future<T> bookkeeping(Function<SqlConnection, Future<T>> statement) {
    return pool.withTransaction(conn -> conn.query(ASYNC_COMMIT).execute().compose(v -> statement.apply(conn)));
  }

  /**
   * Marks the outbox items the owner's sibling is known to hold as synced and takes them off the queue; answers how
   * many items changed.
   */
  public Future<Integer> markSiblingHas(List<HeldItem> items) {
    Tuple args = heldArgs(items);
    return bookkeeping(conn -> conn.preparedQuery(MARK_SIBLING_HAS).execute(args).map(rows -> rows.rowCount()));
  }

  /** Whether {@code sibling} is still owed this pair revision of {@code owner} (its queue row waits, held or not). */
  public Future<Boolean> owesPair(String sibling, String owner, String baseKey, long revision) {
    return pool.preparedQuery(OWES_PAIR).execute(Tuple.of(sibling, owner, baseKey, revision))
        .map(rows -> rows.iterator().next().getBoolean(0));
  }

  /**
   * Offers the held queue rows of these pair revisions at once: their forward failed, so sync carries them; answers
   * how many rows changed.
   */
  public Future<Integer> releaseHeld(List<HeldItem> pairs) {
    Tuple args = heldArgs(pairs);
    return bookkeeping(conn -> conn.preparedQuery(RELEASE_HELD).execute(args).map(rows -> rows.rowCount()));
  }

  /** {@code items} as the four array parameters of the statements that take them: owners, types, keys, revisions. */
  private static Tuple heldArgs(List<HeldItem> items) {
    String[] owners = new String[items.size()];
    Short[] types = new Short[items.size()];
    String[] keys = new String[items.size()];
    Long[] revisions = new Long[items.size()];
    for (int i = 0; i < items.size(); i++) {
      owners[i] = items.get(i).owner();
      types[i] = (short) items.get(i).itemType();
      keys[i] = items.get(i).itemKey();
      revisions[i] = items.get(i).revision();
    }
    return Tuple.tuple(List.of(owners, types, keys, revisions));
  }

  /** One outbox item of {@code owner} (type, key, revision) that the owner's sibling holds. */
  public record HeldItem(String owner, int itemType, String itemKey, long revision) {
    /** A pair revision the sibling acknowledged by forward. */
    public static HeldItem forwardedPair(String owner, String baseKey, long revision) {
      return new HeldItem(owner, PAIR, baseKey, revision);
    }
  }

  /**
   * The oldest DM items (pairs, incoming copies, receipts, tombstones) owed to {@code puller} after
   * {@code afterSyncId}, of owners shared with it.
   */
  public Future<List<DmItem>> dmPage(String puller, long afterSyncId, int limit) {
    Tuple args = Tuple.of(puller, limit, self, afterSyncId, clock.millis());
    return pool.preparedQuery(DM_PAGE).execute(args).map(rows -> {
      List<DmItem> items = new ArrayList<>(rows.size());
      for (Row row : rows) {
        Buffer pair = row.getBuffer("pair_blob");
        items.add(new DmItem(row.getLong("sync_id"), row.getString("owner"), row.getShort("item_type"),
            row.getBuffer("blob").getBytes(), pair == null ? null : pair.getBytes()));
      }
      return items;
    });
  }

  /** The oldest settings items owed to {@code puller} after {@code afterSyncId}, of owners shared with it. */
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

  /**
   * Sets every outbox item of {@code owner} (settings and DM) back to unsynced and owes each to the owner's siblings
   * again; answers how many items were synced before.
   */
  public Future<Integer> markAllUnsynced(String owner) {
    return pool.preparedQuery(MARK_UNSYNCED).execute(Tuple.of(owner, self))
        .map(rows -> rows.iterator().next().getLong(0).intValue());
  }

  /**
   * Inside the transaction of a card that replaced {@code owner}'s routes: its queue follows them (the rows of a
   * server that is no longer its sibling go, a new sibling is owed the items no sibling has yet).
   */
  public Future<Void> followRoutes(SqlConnection conn, String owner) {
    return conn.preparedQuery(FOLLOW_ROUTES).execute(Tuple.of(owner, self)).mapEmpty();
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

  /** A sibling's two queues: DM items (pairs, copies, receipts, tombstones), and settings items. */
  public enum Lane {
    DM,
    SETTINGS
  }

  /** A server sharing users with this one. */
  public record Sibling(String serverLogin, String url) {
  }
}
