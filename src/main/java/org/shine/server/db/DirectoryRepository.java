package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.shine.server.model.StoredUser;
import org.shine.server.model.UserCard;

/** SQL of the directory: {@code user_card} and {@code user_access_servers_current}. */
public final class DirectoryRepository {
  /** The card and its routes in one statement (a login reads this): a row per route, one without when none. */
  private static final String SELECT_USER =
      "SELECT c.public_key, c.version, c.card_json, r.server_login, r.url FROM user_card c"
          + " LEFT JOIN user_access_servers_current r ON r.login = c.login WHERE c.login = $1 ORDER BY r.position";
  private static final String LOCK_LOGIN = "SELECT pg_advisory_xact_lock(hashtext('user_card:' || $1))";
  private static final String LOCK_CARD =
      "SELECT public_key, version, card_json FROM user_card WHERE login = $1";
  private static final String UPSERT_CARD =
      "INSERT INTO user_card (login, public_key, version, card_json, updated_at_ms) VALUES ($1, $2, $3, $4, $5)"
          + " ON CONFLICT (login) DO UPDATE SET version = EXCLUDED.version, card_json = EXCLUDED.card_json,"
          + " updated_at_ms = EXCLUDED.updated_at_ms";
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
      return Optional.of(new StoredUser(login, card.getBuffer("public_key").getBytes(), card.getLong("version"),
          card.getString("card_json"), routes));
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
   * Serialises card writes of one login (also when the login is new) for the rest of {@code conn}'s transaction,
   * then reads the current card.
   */
  public Future<Optional<LockedCard>> lock(SqlConnection conn, String login) {
    return conn.preparedQuery(LOCK_LOGIN).execute(Tuple.of(login))
        .compose(v -> conn.preparedQuery(LOCK_CARD).execute(Tuple.of(login))).map(rows -> {
      if (rows.size() == 0) {
        return Optional.empty();
      }
      Row row = rows.iterator().next();
      return Optional.of(new LockedCard(row.getBuffer("public_key").getBytes(), row.getLong("version"),
          row.getString("card_json")));
    });
  }

  /**
   * Writes a newer card and replaces the user's routes, inside {@code conn}'s transaction; answers whether the set of
   * the user's servers changed (a URL alone does not count).
   */
  public Future<Boolean> store(SqlConnection conn, UserCard card, byte[] publicKey, String cardJson, long nowMs) {
    Set<String> servers = new HashSet<>();
    List<Tuple> routes = new ArrayList<>();
    for (int i = 0; i < card.accessServers().size(); i++) {
      UserCard.Route route = card.accessServers().get(i);
      servers.add(route.serverLogin());
      routes.add(Tuple.of(card.login(), (short) i, route.serverLogin(), route.url()));
    }
    return conn.preparedQuery(UPSERT_CARD)
        .execute(Tuple.of(card.login(), Buffer.buffer(publicKey), card.version(), cardJson, nowMs))
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

  /** The stored fields a card publish compares against. */
  public record LockedCard(byte[] publicKey, long version, String cardJson) {
  }
}
