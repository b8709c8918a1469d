package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.shine.server.delivery.DeliveryState;

/** SQL of {@code dm_delivery}: claiming due rows under a lease, finishing attempts, status reads. */
public final class DeliveryRepository {
  /*
   * Due rows come only from the partial index dm_delivery_due (state = 'accepted'); SKIP LOCKED keeps concurrent
   * claimers apart, the lease keeps a claimed row out of every other worker's reach until it expires, and the
   * row version bumped here is what the attempt's result must still match.
   */
  static final String CLAIM_DUE =
      "WITH due AS ("
          + " SELECT base_key, revision FROM dm_delivery"
          + " WHERE state = 'accepted' AND next_attempt_at_ms <= $1"
          + " AND (lease_until_ms IS NULL OR lease_until_ms < $1)"
          + " ORDER BY next_attempt_at_ms LIMIT $3 FOR UPDATE SKIP LOCKED)"
          + " UPDATE dm_delivery d SET lease_until_ms = $1 + $2, row_version = d.row_version + 1, updated_at_ms = $1"
          + " FROM due WHERE d.base_key = due.base_key AND d.revision = due.revision"
          + " RETURNING d.base_key, d.revision, d.owner, d.accepted_at_ms, d.attempts, d.row_version,"
          + " COALESCE((SELECT m.pair_blob FROM dm_message m WHERE m.owner = d.owner AND m.base_key = d.base_key"
          + " AND m.revision = d.revision), (SELECT s.blob FROM dm_signal s WHERE s.owner = d.owner"
          + " AND s.signal_key = d.base_key || '|3')) AS pair_blob";

  private static final String FINISH =
      "UPDATE dm_delivery SET state = $4, attempts = $5, next_attempt_at_ms = $6, lease_until_ms = NULL,"
          + " row_version = row_version + 1, updated_at_ms = $7"
          + " WHERE base_key = $1 AND revision = $2 AND row_version = $3 AND state = 'accepted'";

  private static final String STATUS =
      "SELECT d.state FROM dm_message m"
          + " LEFT JOIN dm_delivery d ON d.base_key = m.base_key AND d.revision = m.revision"
          + " WHERE m.owner = $1 AND m.base_key = $2 AND m.direction = 2";

  private static final String STATE_OF = "SELECT state FROM dm_delivery WHERE base_key = $1 AND revision = $2";
  private static final String LATEST_STATE =
      "SELECT state FROM dm_delivery WHERE owner = $1 AND base_key = $2 ORDER BY revision DESC LIMIT 1";

  private final Pool pool;

  public DeliveryRepository(Pool pool) {
    this.pool = Objects.requireNonNull(pool);
  }

  /** Claims up to {@code limit} due rows for {@code leaseMs}. */
  public Future<List<ClaimedDelivery>> claimDue(long nowMs, long leaseMs, int limit) {
    return pool.preparedQuery(CLAIM_DUE).execute(Tuple.of(nowMs, leaseMs, limit)).map(rows -> {
      List<ClaimedDelivery> claimed = new ArrayList<>(rows.size());
      for (Row row : rows) {
        Buffer pair = row.getBuffer("pair_blob");
        claimed.add(new ClaimedDelivery(row.getString("base_key"), row.getLong("revision"), row.getString("owner"),
            row.getLong("accepted_at_ms"), row.getInteger("attempts"), row.getLong("row_version"),
            pair == null ? null : pair.getBytes()));
      }
      return claimed;
    });
  }

  /**
   * Records an attempt's result if the row is still the one claimed (same row version, still accepted);
   * answers whether it was recorded. {@code nextAttemptAtMs} is null for a terminal state.
   */
  public Future<Boolean> finish(String baseKey, long revision, long claimedVersion, DeliveryState state,
      int attempts, Long nextAttemptAtMs, long nowMs) {
    Tuple params = Tuple.tuple(java.util.Arrays.asList(baseKey, revision, claimedVersion, state.wire(), attempts,
        nextAttemptAtMs, nowMs));
    return pool.preparedQuery(FINISH).execute(params).map(rows -> rows.rowCount() == 1);
  }

  /** The state of the stored revision of {@code owner}'s outgoing copy, or empty when there is no such copy. */
  public Future<Optional<DeliveryState>> status(String owner, String baseKey) {
    return pool.preparedQuery(STATUS).execute(Tuple.of(owner, baseKey)).map(rows -> {
      if (rows.size() == 0) {
        return Optional.empty();
      }
      String state = rows.iterator().next().getString("state");
      return Optional.of(state == null ? DeliveryState.ACCEPTED : DeliveryState.fromWire(state));
    });
  }

  /** The state of one delivery row (a read receipt's row is its baseKey at revision 0). */
  public Future<Optional<DeliveryState>> stateOf(String baseKey, long revision) {
    return pool.preparedQuery(STATE_OF).execute(Tuple.of(baseKey, revision)).map(DeliveryRepository::firstState);
  }

  /** The state of the newest revision's delivery row of a message here, or empty when there is none. */
  public Future<Optional<DeliveryState>> latestState(String owner, String baseKey) {
    return pool.preparedQuery(LATEST_STATE).execute(Tuple.of(owner, baseKey)).map(DeliveryRepository::firstState);
  }

  private static Optional<DeliveryState> firstState(RowSet<Row> rows) {
    return rows.size() == 0 ? Optional.empty()
        : Optional.of(DeliveryState.fromWire(rows.iterator().next().getString("state")));
  }

  /** A row claimed for one attempt; {@code pairBlob} is null when the revision was replaced meanwhile. */
  public record ClaimedDelivery(String baseKey, long revision, String owner, long acceptedAtMs, int attemptsDone,
      long rowVersion, byte[] pairBlob) {
  }
}
