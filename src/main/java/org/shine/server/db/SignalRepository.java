package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import org.shine.server.model.HubEntry;

/**
 * SQL of read receipts and tombstones ({@code dm_signal}): storing one applies it to the owner's copy (read time,
 * deleted flag), adds the owner's outbox item (with its sync queue rows when unsynced) and, for a reader's own receipt, the delivery row that carries it
 * to the original sender's servers, and the hub entry of its event when the owner polls — all in one statement.
 */
public final class SignalRepository {
  private static final String FIND = "SELECT blob FROM dm_signal WHERE owner = $1 AND signal_key = $2";
  private static final String STORE =
      "WITH written AS ("
          + " INSERT INTO dm_signal (owner, signal_key, kind, author, ref, created_at_ms, blob, stored_at_ms)"
          + " VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING"
          + " RETURNING owner, signal_key, kind, ref, created_at_ms),"
          + " read AS (UPDATE dm_message m SET read_at_ms = LEAST(COALESCE(m.read_at_ms, w.created_at_ms),"
          + " w.created_at_ms) FROM written w WHERE w.kind = 3 AND m.owner = w.owner AND m.base_key = w.ref),"
          + " deleted AS (UPDATE dm_message m SET deleted = true FROM written w"
          + " WHERE w.kind = 4 AND m.owner = w.owner AND m.base_key || '|' || m.direction = w.ref),"
          + " outbox AS (INSERT INTO sync_outbox (owner, item_type, item_key, revision, synced, created_at_ms)"
          + " SELECT owner, kind, signal_key, 0, $9, $8 FROM written ON CONFLICT DO NOTHING"
          + " RETURNING sync_id, owner, item_type, item_key, synced, created_at_ms)"
          + SyncQueueSql.queue("SELECT sync_id, owner, item_type, item_key, created_at_ms FROM outbox WHERE NOT synced",
              "$15")
          + ", delivery AS (INSERT INTO dm_delivery (base_key, revision, owner, state, accepted_at_ms, attempts,"
          + " next_attempt_at_ms, lease_until_ms, updated_at_ms)"
          + " SELECT $10, 0, owner, 'accepted', $8, 0, $8, NULLIF($11::int8, 0), $8 FROM written WHERE $12"
          + " ON CONFLICT DO NOTHING)"
          + HubQueueSql.queue("SELECT owner AS login, $13::text AS event_key, $14::text AS body, 1::int8 AS ord"
              + " FROM written WHERE $14 <> ''", "$8")
          + " SELECT count(*) FROM written";

  private final Pool pool;
  private final String self;

  /** {@code self}: this server's serverLogin (an unsynced signal is owed to its owner's other routes). */
  public SignalRepository(Pool pool, String self) {
    this.pool = Objects.requireNonNull(pool);
    this.self = Objects.requireNonNull(self);
  }

  /** The stored bytes of a signal, if any. */
  public Future<Optional<byte[]>> find(String owner, String signalKey) {
    return pool.preparedQuery(FIND).execute(Tuple.of(owner, signalKey)).map(rows -> rows.size() == 0
        ? Optional.empty() : Optional.of(rows.iterator().next().getBuffer(0).getBytes()));
  }

  /**
   * Stores and applies a signal for {@code owner}; with {@code deliverAs} (the signal's baseKey) it also gets a
   * delivery row, leased until {@code leaseUntilMs} (0: none), and with {@code hub} (the owner polls) the hub entry
   * of its event. Answers whether it was new.
   */
  public Future<Boolean> store(String owner, Signal signal, boolean synced, String deliverAs, long leaseUntilMs,
      long nowMs, HubEntry hub) {
    if (hub != null && !hub.login().equals(owner)) {
      throw new IllegalArgumentException("a signal's hub entry belongs to its owner: " + owner);
    }
    Tuple params = Tuple.tuple(Arrays.asList(owner, signal.key(), (short) signal.kind(), signal.author(),
        signal.ref(), signal.createdAtMs(), Buffer.buffer(signal.blob()), nowMs, synced,
        deliverAs == null ? "" : deliverAs, leaseUntilMs, deliverAs != null, hub == null ? "" : hub.eventKey(),
        hub == null ? "" : hub.body(), self));
    return pool.preparedQuery(STORE).execute(params).map(rows -> {
      Row row = rows.iterator().next();
      return row.getLong(0) > 0;
    });
  }

  /** A receipt or tombstone container as stored. */
  public record Signal(String key, int kind, String author, String ref, long createdAtMs, byte[] blob) {
  }
}
