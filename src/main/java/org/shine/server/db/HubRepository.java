package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * SQL of the polling hub: challenges, token families (stored hashed), subscribers and the per-user queue. Entries
 * are queued by the statements that write what causes them ({@link HubQueueSql}), never here.
 */
public final class HubRepository {
  /*
   * Keeps the login's newest $4 challenges: the DELETE sees the rows from before the INSERT, so it keeps $4 - 1 of
   * those. Concurrent issues for one login may each keep their view's newest, leaving a few more until the next.
   */
  private static final String SAVE_CHALLENGE =
      "WITH saved AS (INSERT INTO hub_challenge (challenge_b64, login, expires_at_ms) VALUES ($1, $2, $3))"
          + " DELETE FROM hub_challenge WHERE login = $2 AND issued <= (SELECT issued FROM hub_challenge"
          + " WHERE login = $2 ORDER BY issued DESC OFFSET $4 - 1 LIMIT 1)";
  private static final String TAKE_CHALLENGE =
      "DELETE FROM hub_challenge WHERE challenge_b64 = $1 AND login = $2 AND expires_at_ms > $3 RETURNING login";
  private static final String SAVE_PAIR =
      "INSERT INTO hub_token (token_hash, login, kind, family, expires_at_ms, created_at_ms, parent_hash,"
          + " parent_used_at_ms) VALUES ($1, $3, 'access', $4, $5, $7, $8, $9),"
          + " ($2, $3, 'refresh', $4, $6, $7, $8, $9)";
  private static final String FIND_TOKEN =
      "SELECT login, kind, family, expires_at_ms, used, revoked FROM hub_token WHERE token_hash = $1";
  /* concurrent presentations of one refresh token queue here, so exactly one rotates it */
  private static final String LOCK_TOKEN =
      "SELECT login, kind, family, expires_at_ms, used, revoked FROM hub_token WHERE token_hash = $1 FOR UPDATE";
  private static final String MARK_USED = "UPDATE hub_token SET used = true WHERE token_hash = $1";
  private static final String CHILDREN =
      "SELECT token_hash, kind, expires_at_ms, used, revoked, parent_used_at_ms FROM hub_token"
          + " WHERE parent_hash = $1";
  private static final String PUT_SECRET =
      "INSERT INTO hub_secret (id, secret) VALUES (1, $1) ON CONFLICT DO NOTHING";
  private static final String GET_SECRET = "SELECT secret FROM hub_secret WHERE id = 1";
  private static final String REVOKE_FAMILY = "UPDATE hub_token SET revoked = true WHERE family = $1";
  private static final String SUBSCRIBE =
      "INSERT INTO hub_subscriber (login, since_ms) VALUES ($1, $2) ON CONFLICT DO NOTHING";
  private static final String SUBSCRIBERS = "SELECT login FROM hub_subscriber";
  /*
   * Strict order per user: only the oldest unacknowledged event is handed out, and only while it is visible; a
   * handed-out event becomes visible again after the visibility timeout, with the same delivery id. Delivery ids
   * are per user (HubQueueSql), and an id is never committed after a greater one of the same user.
   */
  /**
   * Hands out the head if it is visible; either way answers the head's id and the time it was visible from (before
   * this statement), so that a poll behind a head in flight knows when to look again. No row: the queue is empty.
   */
  private static final String TAKE_HEAD =
      "WITH head AS (SELECT delivery_id, visible_at_ms FROM hub_queue WHERE login = $1 AND NOT acked"
          + " ORDER BY delivery_id LIMIT 1 FOR UPDATE),"
          + " taken AS (UPDATE hub_queue q SET visible_at_ms = $2 + $3 FROM head"
          + " WHERE q.login = $1 AND q.delivery_id = head.delivery_id AND head.visible_at_ms <= $2"
          + " RETURNING q.delivery_id, q.body)"
          + " SELECT head.delivery_id, head.visible_at_ms, taken.body FROM head LEFT JOIN taken USING (delivery_id)";
  private static final String RELEASE =
      "UPDATE hub_queue SET visible_at_ms = 0 WHERE login = $1 AND delivery_id = $2 AND NOT acked";
  private static final String ACK =
      "UPDATE hub_queue SET acked = true WHERE delivery_id = $1 AND login = $2 RETURNING delivery_id";
  private static final String EXPIRE =
      "WITH queue AS (DELETE FROM hub_queue WHERE created_at_ms < $1),"
          + " tokens AS (DELETE FROM hub_token WHERE expires_at_ms < $2),"
          + " challenges AS (DELETE FROM hub_challenge WHERE expires_at_ms < $2),"
          + " keys AS (DELETE FROM hub_token_family_key f WHERE NOT EXISTS (SELECT 1 FROM hub_token t"
          + " WHERE t.family = f.family AND t.expires_at_ms >= $2)) SELECT 1";
  private static final String SAVE_FAMILY_KEY =
      "INSERT INTO hub_token_family_key (family, login, device_key) VALUES ($1, $2, $3)";
  private static final String REVOKE_KEY_FAMILIES =
      "UPDATE hub_token SET revoked = true WHERE family IN (SELECT family FROM hub_token_family_key"
          + " WHERE login = $1 AND device_key = ANY($2)) AND NOT revoked";

  private final Pool pool;

  public HubRepository(Pool pool) {
    this.pool = Objects.requireNonNull(pool);
  }

  /** Stores a challenge and drops the login's oldest beyond {@code perLogin}. */
  public Future<Void> saveChallenge(String challengeB64, String login, long expiresAtMs, int perLogin) {
    return pool.preparedQuery(SAVE_CHALLENGE).execute(Tuple.of(challengeB64, login, expiresAtMs, perLogin))
        .mapEmpty();
  }

  /** Consumes a live challenge issued to {@code login}; false when there is none. */
  public Future<Boolean> takeChallenge(String challengeB64, String login, long nowMs) {
    return pool.preparedQuery(TAKE_CHALLENGE).execute(Tuple.of(challengeB64, login, nowMs))
        .map(rows -> rows.size() == 1);
  }

  /** Stores both tokens of a pair, through the pool or inside a transaction. */
  public Future<Void> savePair(SqlClient client, NewPair pair) {
    return client.preparedQuery(SAVE_PAIR).execute(Tuple.of(Buffer.buffer(pair.accessHash()),
        Buffer.buffer(pair.refreshHash()), pair.login(), pair.family(), pair.accessExpiresAtMs(),
        pair.refreshExpiresAtMs(), pair.createdAtMs(), pair.parentHash() == null ? null
            : Buffer.buffer(pair.parentHash()), pair.parentHash() == null ? null : pair.createdAtMs())).mapEmpty();
  }

  /** Notes the device key (base64) that started token family {@code family} of {@code login}. */
  public Future<Void> saveFamilyKey(String family, String login, String deviceKeyB64) {
    return pool.preparedQuery(SAVE_FAMILY_KEY).execute(Tuple.of(family, login, deviceKeyB64)).mapEmpty();
  }

  /** Revokes every token of the families that {@code login}'s keys {@code keysB64} started; answers how many. */
  public Future<Integer> revokeKeyFamilies(String login, List<String> keysB64) {
    return pool.preparedQuery(REVOKE_KEY_FAMILIES)
        .execute(Tuple.of(login).addArrayOfString(keysB64.toArray(new String[0])))
        .map(rows -> rows.rowCount());
  }

  public Future<Optional<StoredToken>> findToken(byte[] hash) {
    return pool.preparedQuery(FIND_TOKEN).execute(Tuple.of(Buffer.buffer(hash))).map(HubRepository::toStoredToken);
  }

  /** Reads a token and holds its row for the rest of {@code conn}'s transaction. */
  public Future<Optional<StoredToken>> lockToken(SqlConnection conn, byte[] hash) {
    return conn.preparedQuery(LOCK_TOKEN).execute(Tuple.of(Buffer.buffer(hash))).map(HubRepository::toStoredToken);
  }

  public Future<Void> markUsed(SqlConnection conn, byte[] hash) {
    return conn.preparedQuery(MARK_USED).execute(Tuple.of(Buffer.buffer(hash))).mapEmpty();
  }

  /** The tokens rotated from the refresh token with hash {@code parentHash}. */
  public Future<List<ChildToken>> children(SqlConnection conn, byte[] parentHash) {
    return conn.preparedQuery(CHILDREN).execute(Tuple.of(Buffer.buffer(parentHash))).map(rows -> {
      List<ChildToken> children = new ArrayList<>(2);
      for (Row row : rows) {
        children.add(new ChildToken(row.getBuffer("token_hash").getBytes(), row.getString("kind"),
            row.getLong("expires_at_ms"), row.getBoolean("used"), row.getBoolean("revoked"),
            row.getLong("parent_used_at_ms")));
      }
      return children;
    });
  }

  public Future<Void> revokeFamily(SqlClient client, String family) {
    return client.preparedQuery(REVOKE_FAMILY).execute(Tuple.of(family)).mapEmpty();
  }

  /**
   * The deployment's rotation secret; the first caller's {@code candidate} becomes it when there is none yet, and
   * every later caller, on any node, reads that one.
   */
  public Future<byte[]> rotationSecret(byte[] candidate) {
    return pool.preparedQuery(PUT_SECRET).execute(Tuple.of(Buffer.buffer(candidate)))
        .compose(v -> pool.query(GET_SECRET).execute())
        .map(rows -> rows.iterator().next().getBuffer("secret").getBytes());
  }

  public Future<Void> subscribe(String login, long nowMs) {
    return pool.preparedQuery(SUBSCRIBE).execute(Tuple.of(login, nowMs)).mapEmpty();
  }

  public Future<List<String>> subscribers() {
    return pool.query(SUBSCRIBERS).execute().map(rows -> {
      List<String> logins = new ArrayList<>();
      rows.forEach(row -> logins.add(row.getString(0)));
      return logins;
    });
  }

  /**
   * Hands out the user's oldest unacknowledged event if it is visible, hiding it for {@code visibilityMs}; else says
   * whether there is one in flight and until when ({@link Head}).
   */
  public Future<Head> takeHead(String login, long nowMs, long visibilityMs) {
    return pool.preparedQuery(TAKE_HEAD).execute(Tuple.of(login, nowMs, visibilityMs)).map(rows -> {
      if (rows.size() == 0) {
        return Head.EMPTY;
      }
      Row row = rows.iterator().next();
      String body = row.getString("body");
      return body != null ? Head.taken(new QueuedEvent(row.getLong("delivery_id"), body))
          : Head.inFlightUntil(row.getLong("visible_at_ms"));
    });
  }

  /** Makes a handed-out event of {@code login} visible again at once (taken, but not handed to anyone). */
  public Future<Void> release(String login, long deliveryId) {
    return pool.preparedQuery(RELEASE).execute(Tuple.of(login, deliveryId)).mapEmpty();
  }

  /** Acknowledges one of the user's deliveries (again: still true); false when the id is not the user's. */
  public Future<Boolean> ack(long deliveryId, String login) {
    return pool.preparedQuery(ACK).execute(Tuple.of(deliveryId, login)).map(rows -> rows.size() == 1);
  }

  /** Drops queue entries older than {@code queueBeforeMs} and expired tokens and challenges. */
  public Future<Void> expire(long queueBeforeMs, long nowMs) {
    return pool.preparedQuery(EXPIRE).execute(Tuple.of(queueBeforeMs, nowMs)).mapEmpty();
  }

  private static Optional<StoredToken> toStoredToken(RowSet<Row> rows) {
    if (rows.size() == 0) {
      return Optional.empty();
    }
    Row row = rows.iterator().next();
    return Optional.of(new StoredToken(row.getString("login"), row.getString("kind"), row.getString("family"),
        row.getLong("expires_at_ms"), row.getBoolean("used"), row.getBoolean("revoked")));
  }

  /** A stored token's facts. */
  public record StoredToken(String login, String kind, String family, long expiresAtMs, boolean used,
      boolean revoked) {
  }

  /** A token pair to store (hashes only); {@code parentHash} is the refresh token it was rotated from, or null. */
  public record NewPair(String login, String family, byte[] accessHash, long accessExpiresAtMs, byte[] refreshHash,
      long refreshExpiresAtMs, long createdAtMs, byte[] parentHash) {
  }

  /** A token rotated from another, with the time its parent was used. */
  public record ChildToken(byte[] hash, String kind, long expiresAtMs, boolean used, boolean revoked,
      long parentUsedAtMs) {
  }

  /** An event handed out with its delivery id. */
  public record QueuedEvent(long deliveryId, String body) {
  }

  /**
   * What a look at the head of a user's queue found: the event it handed out ({@code taken}), or none, in which case
   * {@code visibleAtMs} is when the head handed out to another poll becomes visible again (0: the queue is empty).
   */
  public record Head(QueuedEvent taken, long visibleAtMs) {
    /** Nothing queued. */
    public static final Head EMPTY = new Head(null, 0);

    public static Head taken(QueuedEvent event) {
      return new Head(Objects.requireNonNull(event), 0);
    }

    public static Head inFlightUntil(long visibleAtMs) {
      return new Head(null, visibleAtMs);
    }
  }
}
