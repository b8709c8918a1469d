package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.shine.server.model.CopyKey;
import org.shine.server.model.DeliveryState;
import org.shine.server.model.HubEntry;

/**
 * SQL of {@code dm_delivery}: claiming due rows under a lease, finishing attempts (with the hub entries of the state
 * changes they record), status reads.
 */
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
          + " d.next_attempt_at_ms,"
          + " COALESCE((SELECT m.pair_blob FROM dm_message m WHERE m.owner = d.owner AND m.base_key = d.base_key"
          + " AND m.revision = d.revision), (SELECT s.blob FROM dm_signal s WHERE s.owner = d.owner"
          + " AND s.signal_key = d.base_key || '|3')) AS pair_blob";

  /*
   * The results of concurrent attempts in one statement (one commit): each row only if it is still the one its
   * attempt claimed (same row version, still accepted), with the hub entry of the state change it records, if any
   * (HubQueueSql). Keys are distinct within a batch. Each row is found by a primary-key probe and updated through
   * its ctid, so the plan never turns into a scan of every accepted row (the partial index matches "state =
   * 'accepted'" too); a row updated meanwhile fails the row-version recheck.
   */
  private static final String FINISH_ALL =
      "WITH input AS (SELECT * FROM unnest($1::text[], $2::int8[], $3::int8[], $4::text[], $5::int4[], $6::int8[],"
          + " $8::text[], $9::text[], $10::text[]) WITH ORDINALITY"
          + " AS f(base_key, revision, row_version, state, attempts, next_attempt_at_ms, hub_login, hub_key, hub_body,"
          + " ord)"
          + "), finished AS ("
          + " UPDATE dm_delivery d SET state = f.state, attempts = f.attempts, next_attempt_at_ms = f.next_attempt_at_ms,"
          + " lease_until_ms = NULL, row_version = d.row_version + 1, updated_at_ms = $7"
          + " FROM (SELECT f.*, (SELECT x.ctid FROM dm_delivery x WHERE x.base_key = f.base_key"
          + " AND x.revision = f.revision) AS tid FROM input f) f"
          + " WHERE d.ctid = f.tid AND d.row_version = f.row_version AND d.state = 'accepted'"
          + " RETURNING d.base_key, d.revision"
          + ")"
          + HubQueueSql.queue("SELECT i.hub_login AS login, i.hub_key AS event_key, i.hub_body AS body, i.ord"
              + " FROM finished w JOIN input i ON i.base_key = w.base_key AND i.revision = w.revision"
              + " WHERE i.hub_body <> ''", "$7")
          + " SELECT base_key, revision FROM finished";

  /*
   * PROTOCOL §7.6: the accepted rows whose recipient has a current route to a server that just came back, claimed
   * like due rows (lease, row version) whether due or not; only rows not touched since it came back, so a row whose
   * extra attempt already failed is not taken again in the same round. A row written later than now was written
   * before the clock moved back, not in this round: it is taken too (else it would wait for the clock to catch up). The recipient is the second field of the
   * baseKey (a receipt's row: the original sender).
   */
  static final String CLAIM_ROUTED_TO =
      "WITH routed AS ("
          + " SELECT d.base_key, d.revision FROM dm_delivery d"
          + " JOIN user_access_servers_current r ON r.login = split_part(d.base_key, '|', 2) AND r.url = $4"
          + " WHERE d.state = 'accepted' AND (d.updated_at_ms < $5 OR d.updated_at_ms > $1)"
          + " AND (d.lease_until_ms IS NULL OR d.lease_until_ms < $1)"
          + " ORDER BY d.next_attempt_at_ms LIMIT $3 FOR UPDATE OF d SKIP LOCKED)"
          + " UPDATE dm_delivery d SET lease_until_ms = $1 + $2, row_version = d.row_version + 1, updated_at_ms = $1"
          + " FROM routed WHERE d.base_key = routed.base_key AND d.revision = routed.revision"
          + " RETURNING d.base_key, d.revision, d.owner, d.accepted_at_ms, d.attempts, d.row_version,"
          + " d.next_attempt_at_ms,"
          + " COALESCE((SELECT m.pair_blob FROM dm_message m WHERE m.owner = d.owner AND m.base_key = d.base_key"
          + " AND m.revision = d.revision), (SELECT s.blob FROM dm_signal s WHERE s.owner = d.owner"
          + " AND s.signal_key = d.base_key || '|3')) AS pair_blob";

  /*
   * The state of the stored revision of each (owner, baseKey) sender's copy: one row per copy stored here, the state
   * null when the revision has no delivery row yet
   */
  private static final String STATUSES =
      "SELECT m.owner, m.base_key, d.state FROM unnest($1::text[], $2::text[]) AS k(owner, base_key)"
          + " JOIN dm_message m ON m.owner = k.owner AND m.base_key = k.base_key AND m.direction = 2"
          + " LEFT JOIN dm_delivery d ON d.base_key = m.base_key AND d.revision = m.revision";

  private static final String STATE_OF = "SELECT state FROM dm_delivery WHERE base_key = $1 AND revision = $2";
  private static final String LATEST_ROW =
      "SELECT revision, state FROM dm_delivery WHERE owner = $1 AND base_key = $2 ORDER BY revision DESC LIMIT 1";

  /*
   * A sender's accepted rows with what was signed: the recipient's copy of a message (or the receipt), for the check
   * of which a revoked key signed (PROTOCOL §4 v3). Accepted rows are few per sender (quotas, §13): the partial index
   * of due rows holds them.
   */
  private static final String ACCEPTED_OF_OWNER =
      "SELECT d.base_key, d.revision, d.row_version, d.attempts,"
          + " COALESCE((SELECT m.pair_blob FROM dm_message m WHERE m.owner = d.owner AND m.base_key = d.base_key"
          + " AND m.revision = d.revision), (SELECT s.blob FROM dm_signal s WHERE s.owner = d.owner"
          + " AND s.signal_key = d.base_key || '|3')) AS signed_blob"
          + " FROM dm_delivery d WHERE d.owner = $1 AND d.state = 'accepted' LIMIT $2";

  private final Pool pool;

  public DeliveryRepository(Pool pool) {
    this.pool = Objects.requireNonNull(pool);
  }

  /** Claims up to {@code limit} due rows for {@code leaseMs}. */
  public Future<List<ClaimedDelivery>> claimDue(long nowMs, long leaseMs, int limit) {
    return pool.preparedQuery(CLAIM_DUE).execute(Tuple.of(nowMs, leaseMs, limit))
        .map(DeliveryRepository::claimed);
  }

  /**
   * Claims up to {@code limit} accepted rows, due or not, whose recipient has a current route to {@code url} and
   * that were not updated since {@code sinceMs} (PROTOCOL §7.6, the extra attempt when a server comes back).
   */
  public Future<List<ClaimedDelivery>> claimRoutedTo(String url, long sinceMs, long nowMs, long leaseMs, int limit) {
    return pool.preparedQuery(CLAIM_ROUTED_TO).execute(Tuple.of(nowMs, leaseMs, limit, url, sinceMs))
        .map(DeliveryRepository::claimed);
  }

  private static List<ClaimedDelivery> claimed(RowSet<Row> rows) {
    List<ClaimedDelivery> claimed = new ArrayList<>(rows.size());
    for (Row row : rows) {
      Buffer pair = row.getBuffer("pair_blob");
      claimed.add(new ClaimedDelivery(row.getString("base_key"), row.getLong("revision"), row.getString("owner"),
          row.getLong("accepted_at_ms"), row.getInteger("attempts"), row.getLong("row_version"),
          row.getLong("next_attempt_at_ms"), pair == null ? null : pair.getBytes()));
    }
    return claimed;
  }

  /** Up to {@code limit} accepted rows of {@code owner}, each with the blob its author signed. */
  public Future<List<AcceptedRow>> acceptedOf(String owner, int limit) {
    return pool.preparedQuery(ACCEPTED_OF_OWNER).execute(Tuple.of(owner, limit)).map(rows -> {
      List<AcceptedRow> accepted = new ArrayList<>(rows.size());
      for (Row row : rows) {
        Buffer blob = row.getBuffer("signed_blob");
        if (blob != null) {
          accepted.add(new AcceptedRow(new RowKey(row.getString("base_key"), row.getLong("revision")),
              row.getLong("row_version"), row.getInteger("attempts"), blob.getBytes()));
        }
      }
      return accepted;
    });
  }

  /**
   * Records the results of several attempts in one statement; each only if its row is still the one claimed (same
   * row version, still accepted). Answers the results that were recorded. Keys must be distinct.
   */
  public Future<Set<RowKey>> finishAll(List<AttemptResult> results, long nowMs) {
    int n = results.size();
    String[] baseKeys = new String[n];
    Long[] revisions = new Long[n];
    Long[] versions = new Long[n];
    String[] states = new String[n];
    Integer[] attempts = new Integer[n];
    Long[] next = new Long[n];
    String[] hubLogins = new String[n];
    String[] hubKeys = new String[n];
    String[] hubBodies = new String[n];
    for (int i = 0; i < n; i++) {
      AttemptResult result = results.get(i);
      HubEntry hub = result.hub();
      hubLogins[i] = hub == null ? "" : hub.login();
      hubKeys[i] = hub == null ? "" : hub.eventKey();
      hubBodies[i] = hub == null ? "" : hub.body();
      baseKeys[i] = result.key().baseKey();
      revisions[i] = result.key().revision();
      versions[i] = result.claimedVersion();
      states[i] = result.state().wire();
      attempts[i] = result.attempts();
      next[i] = result.nextAttemptAtMs();
    }
    Tuple params = Tuple.tuple(List.of(baseKeys, revisions, versions, states, attempts, next, nowMs, hubLogins,
        hubKeys, hubBodies));
    return pool.preparedQuery(FINISH_ALL).execute(params).map(rows -> {
      Set<RowKey> recorded = new HashSet<>();
      for (Row row : rows) {
        recorded.add(new RowKey(row.getString("base_key"), row.getLong("revision")));
      }
      return recorded;
    });
  }

  /**
   * The state of the stored revision of each of these sender's copies, in one statement (a copy without a delivery
   * row is {@code accepted}); a copy not stored here is absent.
   */
  public Future<Map<CopyKey, DeliveryState>> statuses(List<CopyKey> copies) {
    return pool.preparedQuery(STATUSES).execute(DmRepository.keyArgs(copies)).map(rows -> {
      Map<CopyKey, DeliveryState> found = new HashMap<>();
      for (Row row : rows) {
        String state = row.getString("state");
        found.put(new CopyKey(row.getString("owner"), row.getString("base_key")),
            state == null ? DeliveryState.ACCEPTED : DeliveryState.fromWire(state));
      }
      return found;
    });
  }

  /** The state of one delivery row (a read receipt's row is its baseKey at revision 0). */
  public Future<Optional<DeliveryState>> stateOf(String baseKey, long revision) {
    return pool.preparedQuery(STATE_OF).execute(Tuple.of(baseKey, revision)).map(DeliveryRepository::firstState);
  }

  /** The newest revision's delivery row of a message here (its revision and state), or empty when there is none. */
  public Future<Optional<StoredRow>> latestRow(String owner, String baseKey) {
    return pool.preparedQuery(LATEST_ROW).execute(Tuple.of(owner, baseKey)).map(rows -> {
      if (rows.size() == 0) {
        return Optional.empty();
      }
      Row row = rows.iterator().next();
      return Optional.of(new StoredRow(row.getLong("revision"), DeliveryState.fromWire(row.getString("state"))));
    });
  }

  private static Optional<DeliveryState> firstState(RowSet<Row> rows) {
    return rows.size() == 0 ? Optional.empty()
        : Optional.of(DeliveryState.fromWire(rows.iterator().next().getString("state")));
  }

  /** A row claimed for one attempt; {@code pairBlob} is null when the revision was replaced meanwhile. */
  public record ClaimedDelivery(String baseKey, long revision, String owner, long acceptedAtMs, int attemptsDone,
      long rowVersion, Long nextAttemptAtMs, byte[] pairBlob) {
  }

  /** The revision and state of a stored delivery row. */
  public record StoredRow(long revision, DeliveryState state) {
  }

  /** One delivery row: a message revision, or a read receipt at revision 0. */
  public record RowKey(String baseKey, long revision) {
  }

  /**
   * The outcome of one attempt for the row claimed at {@code claimedVersion}: the new state, the attempts counted,
   * the next attempt time ({@code null} for a terminal state) and the hub entry of the state change (the sender
   * polls and is owed the change), or null.
   */
  /** An accepted delivery row (its key, version and attempts) and the blob its author signed. */
  public record AcceptedRow(RowKey key, long rowVersion, int attempts, byte[] signedBlob) {
  }

  public record AttemptResult(RowKey key, long claimedVersion, DeliveryState state, int attempts,
      Long nextAttemptAtMs, HubEntry hub) {

    /** A result without a hub entry. */
    public AttemptResult(RowKey key, long claimedVersion, DeliveryState state, int attempts, Long nextAttemptAtMs) {
      this(key, claimedVersion, state, attempts, nextAttemptAtMs, null);
    }
  }
}
