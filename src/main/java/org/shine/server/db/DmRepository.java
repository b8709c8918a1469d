package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.shine.server.dm.DmKeys;
import org.shine.server.dm.DmKind;
import org.shine.server.model.ConversationEntry;
import org.shine.server.model.ConversationQuery;
import org.shine.server.model.CopyKey;
import org.shine.server.model.CopyWrite;
import org.shine.server.model.DeliveryPlan;
import org.shine.server.model.DeliveryState;
import org.shine.server.model.HistoryEntry;
import org.shine.server.model.HubEntry;
import org.shine.server.model.HistoryQuery;
import org.shine.server.model.StoredCopy;

/**
 * SQL of the message store: {@code dm_message} copies, their {@code dm_delivery} rows, their {@code sync_queue}
 * rows and the hub entries of the copies' events. Reads and writes take many copies at once so concurrent requests share one round trip.
 */
public final class DmRepository {
  /*
   * One primary-key probe per requested key, whatever the statistics say: a prepared statement's plan is made
   * once, often while the table is still small, and a hash join over a scan of the whole table would then cost
   * more with every message stored.
   */
  private static final String FIND_COPIES =
      "SELECT m.owner, m.base_key, m.revision, m.blob, m.pair_blob, m.state"
          + " FROM unnest($1::text[], $2::text[]) AS k(owner, base_key)"
          + " CROSS JOIN LATERAL (SELECT c.owner, c.base_key, c.revision, c.blob, c.pair_blob,"
          + " (SELECT d.state FROM dm_delivery d WHERE d.base_key = c.base_key AND d.revision = c.revision) AS state"
          + " FROM dm_message c WHERE c.owner = k.owner AND c.base_key = k.base_key) m";

  /*
   * One statement, hence one atomic transaction, for a whole batch: upsert the copies (a higher revision replaces
   * the stored one, anything else leaves it), then create the delivery row of every outgoing copy written, the sync
   * queue row of every copy written unsynced (a copy is its own sync item: SyncQueueSql.queueCopies) and the hub entry
   * of every copy written that carries one (HubQueueSql).
   */
  private static final String STORE_COPIES =
      "WITH input AS ("
          + " SELECT * FROM unnest($1::text[], $2::text[], $3::int2[], $4::text[], $5::int8[], $6::int8[],"
          + " $7::bytea[], $8::bytea[], $9::text[], $10::bool[], $12::int8[], $13::int4[], $14::int8[],"
          + " $15::int8[], $16::text[], $17::text[], $19::int8[]) WITH ORDINALITY"
          + " AS t(owner, base_key, direction, peer, created_at_ms, revision, blob, pair_blob, delivery_state, synced,"
          + " lease_until_ms, attempts, next_attempt_at_ms, accepted_at_ms, hub_key, hub_body, sync_hold, ord)"
          + "), written AS ("
          + " INSERT INTO dm_message AS m (owner, base_key, direction, peer, created_at_ms, revision, blob, pair_blob,"
          + " stored_at_ms, read_at_ms, deleted)"
          + " SELECT owner, base_key, direction, peer, created_at_ms, revision, blob,"
          + " CASE WHEN direction = 2 THEN pair_blob END, $11,"
          // a receipt or tombstone that arrived before the copy still applies to it
          + " (SELECT min(s.created_at_ms) FROM dm_signal s WHERE s.owner = input.owner AND s.kind = 3"
          + " AND s.ref = input.base_key),"
          + " EXISTS (SELECT 1 FROM dm_signal s WHERE s.owner = input.owner AND s.kind = 4"
          + " AND s.ref = input.base_key || '|' || input.direction) FROM input"
          + " ON CONFLICT (owner, base_key) DO UPDATE SET revision = EXCLUDED.revision, blob = EXCLUDED.blob,"
          + " pair_blob = EXCLUDED.pair_blob, stored_at_ms = EXCLUDED.stored_at_ms"
          + " WHERE m.revision < EXCLUDED.revision"
          + " RETURNING m.owner, m.base_key, m.direction, m.revision"
          + "), delivery AS ("
          + " INSERT INTO dm_delivery (base_key, revision, owner, state, accepted_at_ms, attempts, next_attempt_at_ms,"
          + " lease_until_ms, updated_at_ms)"
          + " SELECT i.base_key, i.revision, i.owner, i.delivery_state, i.accepted_at_ms, i.attempts,"
          + " NULLIF(i.next_attempt_at_ms, -1), NULLIF(i.lease_until_ms, 0), $11"
          + " FROM written w JOIN input i ON i.owner = w.owner AND i.base_key = w.base_key"
          + " WHERE w.direction = 2"
          + " ON CONFLICT (base_key, revision) DO NOTHING"
          + ")"
          + SyncQueueSql.queueCopies("SELECT w.owner, CASE WHEN w.direction = 2 THEN 1 ELSE 2 END AS item_type,"
              + " w.base_key AS item_key, w.revision, $11::int8 AS created_at_ms, i.sync_hold AS visible_at_ms"
              + " FROM written w JOIN input i ON i.owner = w.owner AND i.base_key = w.base_key WHERE NOT i.synced",
              "$18")
          + HubQueueSql.queue("SELECT i.owner AS login, i.hub_key AS event_key, i.hub_body AS body, i.ord"
              + " FROM written w JOIN input i ON i.owner = w.owner AND i.base_key = w.base_key"
              + " WHERE i.hub_body <> ''", "$11")
          + " SELECT owner, base_key FROM written";

  private static final String HISTORY =
      "SELECT m.base_key, m.direction, m.revision, m.blob, d.state,"
          // the columns are the fast path; a signal committed while the copy's insert was still in flight (each
          // statement missed the other's uncommitted row) is found here, so no interleaving loses a read or delete
          + " m.read_at_ms IS NOT NULL OR EXISTS (SELECT 1 FROM dm_signal s WHERE s.owner = m.owner AND s.kind = 3"
          + " AND s.ref = m.base_key) AS read,"
          + " m.deleted OR EXISTS (SELECT 1 FROM dm_signal s WHERE s.owner = m.owner AND s.kind = 4"
          + " AND s.ref = m.base_key || '|' || m.direction) AS deleted"
          + " FROM dm_message m"
          + " LEFT JOIN dm_delivery d ON m.direction = 2 AND d.base_key = m.base_key AND d.revision = m.revision"
          + " WHERE m.owner = $1 AND m.peer = $2 AND m.created_at_ms < $3"
          + " ORDER BY m.created_at_ms DESC, m.base_key DESC LIMIT $4";

  /*
   * The chat list: per peer of the owner, the newest copy not deleted (one probe of the history index each) and the
   * owner's incoming copies without a receipt of the owner. The signal probes repeat the columns' fast path for the
   * same reason as in HISTORY.
   */
  private static final String CONVERSATIONS =
      "SELECT p.peer, l.base_key, l.direction, l.created_at_ms, l.blob,"
          + " (SELECT count(*) FROM dm_message u WHERE u.owner = $1 AND u.peer = p.peer AND u.direction = 1"
          + " AND u.read_at_ms IS NULL AND NOT u.deleted"
          + " AND NOT EXISTS (SELECT 1 FROM dm_signal s WHERE s.owner = u.owner AND s.kind = 3 AND s.ref = u.base_key)"
          + " AND NOT EXISTS (SELECT 1 FROM dm_signal s WHERE s.owner = u.owner AND s.kind = 4"
          + " AND s.ref = u.base_key || '|1')) AS unread"
          + " FROM (SELECT DISTINCT peer FROM dm_message WHERE owner = $1) p"
          + " CROSS JOIN LATERAL (SELECT m.base_key, m.direction, m.created_at_ms, m.blob FROM dm_message m"
          + " WHERE m.owner = $1 AND m.peer = p.peer AND NOT m.deleted"
          + " AND NOT EXISTS (SELECT 1 FROM dm_signal s WHERE s.owner = m.owner AND s.kind = 4"
          + " AND s.ref = m.base_key || '|' || m.direction)"
          + " ORDER BY m.created_at_ms DESC, m.base_key DESC LIMIT 1) l"
          + " WHERE l.created_at_ms < $2"
          + " ORDER BY l.created_at_ms DESC, p.peer LIMIT $3";

  private final Pool pool;
  private final String self;

  /** {@code self}: this server's serverLogin (an unsynced copy is owed to its owner's other routes). */
  public DmRepository(Pool pool, String self) {
    this.pool = Objects.requireNonNull(pool);
    this.self = Objects.requireNonNull(self);
  }

  /** {@code keys} as the two array parameters of a keyed batch read: $1 owners, $2 base keys. */
  static Tuple keyArgs(List<CopyKey> keys) {
    String[] owners = new String[keys.size()];
    String[] baseKeys = new String[keys.size()];
    for (int i = 0; i < keys.size(); i++) {
      owners[i] = keys.get(i).owner();
      baseKeys[i] = keys.get(i).baseKey();
    }
    return Tuple.tuple(List.of(owners, baseKeys));
  }

  /** The stored copies among {@code keys}, with the delivery state of their stored revision where one exists. */
  public Future<Map<CopyKey, StoredCopy>> findCopies(List<CopyKey> keys) {
    return pool.preparedQuery(FIND_COPIES).execute(keyArgs(keys)).map(rows -> {
      Map<CopyKey, StoredCopy> found = new HashMap<>();
      for (Row row : rows) {
        Buffer pair = row.getBuffer("pair_blob");
        String state = row.getString("state");
        CopyKey key = new CopyKey(row.getString("owner"), row.getString("base_key"));
        found.put(key, new StoredCopy(key, row.getLong("revision"), row.getBuffer("blob").getBytes(),
            pair == null ? null : pair.getBytes(), state == null ? null : DeliveryState.fromWire(state)));
      }
      return found;
    });
  }

  /**
   * Writes a batch of copies atomically (keys must be distinct) and answers which of them were written; a copy
   * not written was already stored with the same or a higher revision.
   */
  public Future<Set<CopyKey>> storeCopies(List<CopyWrite> copies, long nowMs) {
    int n = copies.size();
    String[] owners = new String[n];
    String[] baseKeys = new String[n];
    Short[] directions = new Short[n];
    String[] peers = new String[n];
    Long[] createdAt = new Long[n];
    Long[] revisions = new Long[n];
    Buffer[] blobs = new Buffer[n];
    Buffer[] pairBlobs = new Buffer[n];
    String[] states = new String[n];
    Boolean[] synced = new Boolean[n];
    Long[] leases = new Long[n];
    Integer[] attempts = new Integer[n];
    Long[] nextAttempts = new Long[n];
    Long[] acceptedAt = new Long[n];
    String[] hubKeys = new String[n];
    String[] hubBodies = new String[n];
    Long[] syncHolds = new Long[n];
    for (int i = 0; i < n; i++) {
      CopyWrite c = copies.get(i);
      owners[i] = c.key().owner();
      baseKeys[i] = c.key().baseKey();
      directions[i] = (short) c.direction().code();
      peers[i] = c.peer();
      createdAt[i] = c.createdAtMs();
      revisions[i] = c.revision();
      blobs[i] = Buffer.buffer(c.blob());
      // arrays carry no NULLs: an empty pair blob stands for "none" and only outgoing copies keep theirs
      pairBlobs[i] = c.pairBlob() == null ? Buffer.buffer() : Buffer.buffer(c.pairBlob());
      DeliveryPlan plan = c.plan();
      states[i] = plan == null ? "" : plan.state().wire();
      synced[i] = c.synced();
      leases[i] = plan == null ? 0L : plan.leaseUntilMs();
      attempts[i] = plan == null ? 0 : plan.attemptsDone();
      nextAttempts[i] = plan == null || plan.nextAttemptAtMs() == null ? -1L : plan.nextAttemptAtMs();
      acceptedAt[i] = plan == null ? nowMs : plan.acceptedAtMs();
      // an empty body stands for "no hub entry": the owner does not poll
      HubEntry hub = c.hub();
      if (hub != null && !hub.login().equals(c.key().owner())) {
        throw new IllegalArgumentException("a copy's hub entry belongs to its owner: " + c.key());
      }
      hubKeys[i] = hub == null ? "" : hub.eventKey();
      hubBodies[i] = hub == null ? "" : hub.body();
      syncHolds[i] = c.syncHoldUntilMs();
    }
    Tuple params = Tuple.tuple(List.of(owners, baseKeys, directions, peers, createdAt, revisions, blobs, pairBlobs,
        states, synced, nowMs, leases, attempts, nextAttempts, acceptedAt, hubKeys, hubBodies, self,
        syncHolds));
    return pool.preparedQuery(STORE_COPIES).execute(params).map(rows -> {
      Set<CopyKey> written = new HashSet<>();
      for (Row row : rows) {
        written.add(new CopyKey(row.getString("owner"), row.getString("base_key")));
      }
      return written;
    });
  }

  /** A page of {@code query.owner()}'s chat list, newest last message first. */
  public Future<List<ConversationEntry>> conversations(ConversationQuery query) {
    Tuple params = Tuple.of(query.owner(), query.beforeLastAtMs(), query.limit());
    return pool.preparedQuery(CONVERSATIONS).execute(params).map(rows -> {
      List<ConversationEntry> entries = new ArrayList<>(rows.size());
      for (Row row : rows) {
        boolean outgoing = row.getShort("direction") == DmKind.OUTGOING.code();
        entries.add(new ConversationEntry(row.getString("peer"),
            DmKeys.messageKey(row.getString("base_key"), outgoing ? DmKind.OUTGOING : DmKind.INCOMING),
            row.getLong("created_at_ms"), outgoing, row.getBuffer("blob").getBytes(), row.getLong("unread")));
      }
      return entries;
    });
  }

  /** A page of {@code query.owner()}'s conversation with {@code query.peer()}, newest first. */
  public Future<List<HistoryEntry>> history(HistoryQuery query) {
    Tuple params = Tuple.of(query.owner(), query.peer(), query.beforeCreatedAtMs(), query.limit());
    return pool.preparedQuery(HISTORY).execute(params).map(rows -> {
      List<HistoryEntry> entries = new ArrayList<>(rows.size());
      for (Row row : rows) {
        boolean outgoing = row.getShort("direction") == DmKind.OUTGOING.code();
        String baseKey = row.getString("base_key");
        String state = row.getString("state");
        entries.add(new HistoryEntry(
            DmKeys.messageKey(baseKey, outgoing ? DmKind.OUTGOING : DmKind.INCOMING),
            baseKey, outgoing, row.getBuffer("blob").getBytes(), row.getLong("revision"),
            outgoing && state != null ? DeliveryState.fromWire(state) : null,
            row.getBoolean("read"), row.getBoolean("deleted")));
      }
      return entries;
    });
  }
}
