package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.shine.server.dm.KeyRing;
import org.shine.server.model.KeyHistoryEntry;
import org.shine.server.model.StoredUser;
import org.shine.server.model.UserCard;

/**
 * SQL of the directory: {@code user_card}, {@code user_access_servers_current}, and the history of cards and keys
 * ({@code user_card_history}, {@code user_key_history}).
 */
public final class DirectoryRepository {
  /** The card and its routes in one statement (a login reads this): a row per route, one without when none. */
  private static final String SELECT_USER =
      "SELECT c.epoch, c.version, coalesce(c.device_keys, encode(c.public_key, 'base64')) AS device_keys,"
          + " c.card_json, r.server_login, r.url, (SELECT string_agg(h.public_key_b64 || ' ' || coalesce(h.retired_at_ms::text, '-') || ' ' || h.revoked,"
          + " ',') FROM user_key_history h WHERE h.login = c.login) AS key_history FROM user_card c"
          + " LEFT JOIN user_access_servers_current r ON r.login = c.login WHERE c.login = $1 ORDER BY r.position";
  private static final String LOCK_LOGIN = "SELECT pg_advisory_xact_lock(hashtext('user_card:' || $1))";
  private static final String LOCK_CARD = "SELECT card_json FROM user_card WHERE login = $1";
  private static final String SELECT_KEY_HISTORY =
      "SELECT public_key_b64, retired_at_ms, revoked FROM user_key_history WHERE login = $1";
  private static final String UPSERT_CARD =
      "INSERT INTO user_card (login, public_key, epoch, version, device_keys, card_json, updated_at_ms)"
          + " VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (login) DO UPDATE SET public_key = EXCLUDED.public_key,"
          + " epoch = EXCLUDED.epoch, version = EXCLUDED.version, device_keys = EXCLUDED.device_keys,"
          + " card_json = EXCLUDED.card_json, updated_at_ms = EXCLUDED.updated_at_ms";
  private static final String INSERT_CARD_HISTORY =
      "INSERT INTO user_card_history (login, epoch, version, card_json, accepted_at_ms) VALUES ($1, $2, $3, $4, $5)"
          + " ON CONFLICT DO NOTHING";
  /** A retirement keeps its first moment; a revocation is for good. */
  private static final String UPSERT_KEY_HISTORY =
      "INSERT INTO user_key_history (login, public_key_b64, retired_at_ms, revoked, recorded_at_ms)"
          + " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (login, public_key_b64) DO UPDATE SET retired_at_ms ="
          + " coalesce(user_key_history.retired_at_ms, EXCLUDED.retired_at_ms),"
          + " revoked = user_key_history.revoked OR EXCLUDED.revoked";
  /** Cards accepted after (epoch, version), oldest first. */
  private static final String SELECT_CHAIN =
      "SELECT card_json FROM user_card_history WHERE login = $1 AND (epoch, version) > ($2, $3)"
          + " ORDER BY epoch, version LIMIT $4";
  private static final String DELETE_ROUTES =
      "DELETE FROM user_access_servers_current WHERE login = $1 RETURNING server_login";
  private static final String INSERT_ROUTE =
      "INSERT INTO user_access_servers_current (login, position, server_login, url) VALUES ($1, $2, $3, $4)";

  private final Pool pool;

  public DirectoryRepository(Pool pool) {
    this.pool = pool;
  }

  /** The stored card of a login with its current routes, read in one statement (every login reads it). */
  public Future<Optional<StoredUser>> find(String login) {
    return pool.preparedQuery(SELECT_USER).execute(Tuple.of(login)).map(rows -> {
      if (rows.size() == 0) {
        return Optional.empty();
      }
      Row card = null;
      List<UserCard.Route> routes = new ArrayList<>(2);
      for (Row row : rows) {
        card = card == null ? row : card;
        if (row.getString("server_login") != null) {
          routes.add(new UserCard.Route(row.getString("server_login"), row.getString("url")));
        }
      }
      return Optional.of(new StoredUser(login, card.getLong("epoch"), card.getLong("version"),
          keyRing(card.getString("device_keys"), card.getString("key_history")), card.getString("card_json"),
          routes));
    });
  }

  /** The stored cards of the users this server serves, as JSON text. */
  public Future<List<String>> servedCards(String serverLogin) {
    return pool.preparedQuery("SELECT c.card_json FROM user_card c WHERE EXISTS (SELECT 1 FROM"
            + " user_access_servers_current r WHERE r.login = c.login AND r.server_login = $1) ORDER BY c.login")
        .execute(Tuple.of(serverLogin)).map(rows -> {
          List<String> cards = new ArrayList<>(rows.size());
          rows.forEach(row -> cards.add(row.getString(0)));
          return cards;
        });
  }

  /**
   * The current routes of the users {@code login} exchanged messages with since {@code sinceMs} (their servers hold
   * or received what {@code login} signed, so they should learn its cards), other than {@code self}; at most
   * {@code limit}. Reads the history index (owner, peer, created_at_ms).
   */
  public Future<List<UserCard.Route>> correspondentsRoutes(String login, long sinceMs, String self, int limit) {
    return pool.preparedQuery("SELECT DISTINCT r.server_login, r.url FROM (SELECT DISTINCT m.peer FROM dm_message m"
            + " WHERE m.owner = $1 AND m.created_at_ms > $2 LIMIT $4) p"
            + " JOIN user_access_servers_current r ON r.login = p.peer WHERE r.server_login <> $3 LIMIT $4")
        .execute(Tuple.of(login, sinceMs, self, limit)).map(DirectoryRepository::toRoutes);
  }

  /**
   * The keys of a user: the current device keys, less what the history retired or revoked, plus the history's
   * retired and revoked keys ({@code key retiredAt|- revoked}, comma-separated as {@link #SELECT_USER} reads them).
   */
  private static KeyRing keyRing(String deviceKeys, String history) {
    List<String> current = List.of(deviceKeys.split(","));
    if (history == null) {
      return KeyRing.of(current, Map.of(), Set.of());
    }
    Map<String, Long> retired = new HashMap<>();
    Set<String> revoked = new HashSet<>();
    for (String entry : history.split(",")) {
      String[] parts = entry.split(" ");
      if (!parts[1].equals("-")) {
        retired.put(parts[0], Long.parseLong(parts[1]));
      }
      if (parts[2].equals("true")) {
        revoked.add(parts[0]);
      }
    }
    return KeyRing.of(current, retired, revoked);
  }

  /** Every retirement and revocation seen for {@code login}, by key, inside {@code conn}'s transaction. */
  public Future<Map<String, KeyHistoryEntry>> keyHistory(SqlConnection conn, String login) {
    return conn.preparedQuery(SELECT_KEY_HISTORY).execute(Tuple.of(login)).map(rows -> {
      Map<String, KeyHistoryEntry> history = new HashMap<>();
      for (Row row : rows) {
        history.put(row.getString(0), new KeyHistoryEntry(row.getString(0), row.getLong(1), row.getBoolean(2)));
      }
      return history;
    });
  }

  /**
   * The cards accepted for {@code login} after (epoch, version), oldest first, at most {@code limit} (the JSON text of
   * each, as accepted).
   */
  public Future<List<String>> chain(String login, long sinceEpoch, long sinceVersion, int limit) {
    return pool.preparedQuery(SELECT_CHAIN).execute(Tuple.of(login, sinceEpoch, sinceVersion, limit)).map(rows -> {
      List<String> cards = new ArrayList<>(rows.size());
      rows.forEach(row -> cards.add(row.getString(0)));
      return cards;
    });
  }

  /**
   * Serialises card writes of one login (also when the login is new) for the rest of {@code conn}'s transaction,
   * then reads the current card's JSON text.
   */
  public Future<Optional<String>> lock(SqlConnection conn, String login) {
    return conn.preparedQuery(LOCK_LOGIN).execute(Tuple.of(login))
        .compose(v -> conn.preparedQuery(LOCK_CARD).execute(Tuple.of(login))).map(rows -> {
      if (rows.size() == 0) {
        return Optional.empty();
      }
      return Optional.of(rows.iterator().next().getString("card_json"));
    });
  }

  /**
   * Writes a newer card (and its place in the login's chain of cards, and the retirements and revocations it lists)
   * and replaces the user's routes, inside {@code conn}'s transaction; answers whether the set of the user's servers
   * changed (a URL alone does not count).
   */
  public Future<Boolean> store(SqlConnection conn, UserCard card, String cardJson, long nowMs) {
    Set<String> servers = new HashSet<>();
    List<Tuple> routes = new ArrayList<>();
    for (int i = 0; i < card.accessServers().size(); i++) {
      UserCard.Route route = card.accessServers().get(i);
      servers.add(route.serverLogin());
      routes.add(Tuple.of(card.login(), (short) i, route.serverLogin(), route.url()));
    }
    List<Tuple> history = new ArrayList<>();
    card.retiredKeys().forEach(key -> history.add(Tuple.of(card.login(), key.publicKeyB64(), key.retiredAtMs(),
        false, nowMs)));
    card.revokedKeysB64().forEach(key -> history.add(Tuple.of(card.login(), key, null, true, nowMs)));
    byte[] firstKey = Base64.getDecoder().decode(card.keys().get(0).publicKeyB64());
    Future<?> written = conn.preparedQuery(UPSERT_CARD).execute(Tuple.from(List.of(card.login(),
            Buffer.buffer(firstKey), card.epoch(), card.version(), String.join(",", card.deviceKeysB64()), cardJson,
            nowMs)))
        .compose(v -> conn.preparedQuery(INSERT_CARD_HISTORY)
            .execute(Tuple.of(card.login(), card.epoch(), card.version(), cardJson, nowMs)));
    if (!history.isEmpty()) {
      written = written.compose(v -> conn.preparedQuery(UPSERT_KEY_HISTORY).executeBatch(history));
    }
    return written
        .compose(v -> conn.preparedQuery(DELETE_ROUTES).execute(Tuple.of(card.login())))
        .compose(old -> {
          Set<String> before = new HashSet<>();
          old.forEach(row -> before.add(row.getString(0)));
          return conn.preparedQuery(INSERT_ROUTE).executeBatch(routes).map(v -> !before.equals(servers));
        });
  }

  private static List<UserCard.Route> toRoutes(RowSet<Row> rows) {
    List<UserCard.Route> routes = new ArrayList<>(2);
    for (Row row : rows) {
      routes.add(new UserCard.Route(row.getString("server_login"), row.getString("url")));
    }
    return routes;
  }
}
