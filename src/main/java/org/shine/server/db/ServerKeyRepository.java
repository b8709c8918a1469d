package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * SQL of server identities (PROTOCOL §6a): this deployment's own key ({@code server_identity}, one row for every
 * node) and what it knows of other servers ({@code known_server}: one URL per serverLogin and the learnt key).
 */
public final class ServerKeyRepository {
  private static final String CREATE_IDENTITY =
      "INSERT INTO server_identity (id, server_login, private_key, public_key, created_at_ms)"
          + " VALUES (1, $1, $2, $3, $4) ON CONFLICT (id) DO NOTHING";
  private static final String IDENTITY =
      "SELECT server_login, private_key, public_key FROM server_identity WHERE id = 1";
  private static final String KNOWN = "SELECT url, public_key FROM known_server WHERE server_login = $1";
  private static final String CLAIM_URL =
      "INSERT INTO known_server (server_login, url) VALUES ($1, $2) ON CONFLICT (server_login) DO NOTHING";
  private static final String URL_OF = "SELECT url FROM known_server WHERE server_login = $1";
  /* a key is learnt once; a second, different key never replaces it here (the operator pins it) */
  private static final String LEARN_KEY =
      "INSERT INTO known_server AS k (server_login, url, public_key, key_learnt_at_ms) VALUES ($1, $2, $3, $4)"
          + " ON CONFLICT (server_login) DO UPDATE SET public_key = EXCLUDED.public_key,"
          + " key_learnt_at_ms = EXCLUDED.key_learnt_at_ms WHERE k.public_key IS NULL"
          + " RETURNING public_key";
  private static final String PIN_KEY =
      "INSERT INTO known_server AS k (server_login, url, public_key, key_learnt_at_ms) VALUES ($1, $2, $3, $4)"
          + " ON CONFLICT (server_login) DO UPDATE SET public_key = EXCLUDED.public_key,"
          + " key_learnt_at_ms = EXCLUDED.key_learnt_at_ms, url = EXCLUDED.url";
  private static final String ROUTED_URL =
      "SELECT server_login FROM user_access_servers_current WHERE url = $1 LIMIT 1";

  private final Pool pool;

  public ServerKeyRepository(Pool pool) {
    this.pool = Objects.requireNonNull(pool);
  }

  /**
   * This deployment's key: the stored one, or {@code candidate} stored now when there is none yet (the first node
   * to start wins; every other node reads the winner's).
   */
  public Future<StoredIdentity> loadOrCreate(String serverLogin, byte[] privateKey, byte[] publicKey, long nowMs) {
    return pool.preparedQuery(CREATE_IDENTITY)
        .execute(Tuple.of(serverLogin, Buffer.buffer(privateKey), Buffer.buffer(publicKey), nowMs))
        .compose(v -> pool.preparedQuery(IDENTITY).execute())
        .map(rows -> {
          Row row = rows.iterator().next();
          return new StoredIdentity(row.getString("server_login"), row.getBuffer("private_key").getBytes(),
              row.getBuffer("public_key").getBytes());
        });
  }

  /** What this server knows of {@code serverLogin}: its URL and, once learnt, its key. */
  public Future<Optional<KnownServer>> find(String serverLogin) {
    return pool.preparedQuery(KNOWN).execute(Tuple.of(serverLogin)).map(rows -> {
      if (rows.size() == 0) {
        return Optional.empty();
      }
      Row row = rows.iterator().next();
      Buffer key = row.getBuffer("public_key");
      return Optional.of(new KnownServer(serverLogin, row.getString("url"), key == null ? null : key.getBytes()));
    });
  }

  /**
   * Inside a card's transaction: makes {@code url} the URL of {@code serverLogin} when none is known yet, and
   * answers the URL known now (which may be another one: the caller refuses the card then).
   */
  public Future<String> claimUrl(SqlConnection conn, String serverLogin, String url) {
    return conn.preparedQuery(CLAIM_URL).execute(Tuple.of(serverLogin, url))
        .compose(v -> conn.preparedQuery(URL_OF).execute(Tuple.of(serverLogin)))
        .map(rows -> rows.iterator().next().getString("url"));
  }

  /** Remembers a key fetched from the server itself; answers the key stored now (an earlier one wins). */
  public Future<byte[]> learnKey(String serverLogin, String url, byte[] publicKey, long nowMs) {
    return pool.preparedQuery(LEARN_KEY).execute(Tuple.of(serverLogin, url, Buffer.buffer(publicKey), nowMs))
        .compose(rows -> rows.size() == 1 ? Future.succeededFuture(rows.iterator().next().getBuffer(0).getBytes())
            : find(serverLogin).map(known -> known.map(KnownServer::publicKey).orElse(publicKey)));
  }

  /** Stores the key an operator pinned (it replaces a learnt one), with the configured URL. */
  public Future<Void> pinKey(String serverLogin, String url, byte[] publicKey, long nowMs) {
    return pool.preparedQuery(PIN_KEY).execute(Tuple.of(serverLogin, url, Buffer.buffer(publicKey), nowMs))
        .mapEmpty();
  }

  /** The serverLogin of a current route that names {@code url}, if some user has one. */
  public Future<Optional<String>> routedServerLogin(String url) {
    return pool.preparedQuery(ROUTED_URL).execute(Tuple.of(url))
        .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(rows.iterator().next().getString(0)));
  }

  /**
   * Servers whose key this one has learnt or pinned (they have logged in with it, or it with them): at most
   * {@code limit}.
   */
  public Future<List<KnownServer>> keyedServers(int limit) {
    return pool.preparedQuery("SELECT server_login, url, public_key FROM known_server WHERE public_key IS NOT NULL"
        + " ORDER BY server_login LIMIT $1").execute(Tuple.of(limit)).map(rows -> {
          List<KnownServer> servers = new ArrayList<>(rows.size());
          for (Row row : rows) {
            servers.add(new KnownServer(row.getString(0), row.getString(1), row.getBuffer(2).getBytes()));
          }
          return servers;
        });
  }

  /** The stored server key of this deployment. */
  public record StoredIdentity(String serverLogin, byte[] privateKey, byte[] publicKey) {
  }

  /** Another server as known here; {@code publicKey} is null until learnt. */
  public record KnownServer(String serverLogin, String url, byte[] publicKey) {
  }
}
