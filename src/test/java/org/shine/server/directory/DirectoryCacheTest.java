package org.shine.server.directory;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.bus.Addresses;
import org.shine.server.db.Database;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.dm.KeyFile;
import org.shine.server.model.StoredUser;
import org.shine.server.support.Eventually;
import org.shine.server.support.Opened;
import org.shine.server.support.TestDatabase;

/** The node's one cache of users over a real database; the rows are changed behind its back in SQL. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class DirectoryCacheTest {
  private static final long TTL_MS = 3_600_000;
  private final Opened opened = new Opened();
  private Vertx vertx;
  private Pool pool;

  @BeforeEach
  void setUp(Vertx vertx) {
    this.vertx = vertx;
    TestDatabase db = opened.keep(TestDatabase.create(vertx));
    Database.prepare(vertx, db.config()).await();
    pool = opened.pool(db);
  }

  @AfterEach
  void close() {
    opened.closeAll();
  }

  private DirectoryCache cache(int maxEntries) {
    DirectoryCache cache = new DirectoryCache(vertx, new DirectoryRepository(pool), TTL_MS, maxEntries);
    cache.start().await();
    opened.onClose(() -> cache.stop().await());
    return cache;
  }

  /** Stores {@code login}'s card with one route, to {@code serverLogin}, or moves its route there. */
  private void routeTo(String login, String serverLogin) {
    pool.preparedQuery("INSERT INTO user_card (login, public_key, version, card_json, updated_at_ms)"
            + " VALUES ($1, $2, 1, '{}', 0) ON CONFLICT (login) DO NOTHING")
        .execute(Tuple.of(login, Buffer.buffer(KeyFile.generate(login).publicKey()))).await();
    pool.preparedQuery("INSERT INTO user_access_servers_current (login, position, server_login, url)"
            + " VALUES ($1, 0, $2, 'ws://127.0.0.1:7100/ws') ON CONFLICT (login, position)"
            + " DO UPDATE SET server_login = EXCLUDED.server_login")
        .execute(Tuple.of(login, serverLogin)).await();
  }

  private static String route(Optional<StoredUser> user) {
    return user.orElseThrow().routes().get(0).serverLogin();
  }

  @Test
  @DisplayName("a user is served from the cache until a change of its card is published; then it is read again")
  void changeDropsEntry() {
    DirectoryCache cache = cache(10);
    routeTo("alice", "s1");
    assertThat(route(cache.find("alice").await())).isEqualTo("s1");
    routeTo("alice", "s2");

    assertThat(route(cache.find("alice").await())).as("served from the cache").isEqualTo("s1");

    vertx.eventBus().publish(Addresses.DIRECTORY_CHANGED, "alice");
    Eventually.until("the change reaches the cache", 20_000,
        () -> route(cache.find("alice").await()).equals("s2"));
  }

  @Test
  @DisplayName("a cache at its bound starts over: what it held is read again")
  void bounded() {
    DirectoryCache cache = cache(1);
    routeTo("alice", "s1");
    routeTo("bob", "s1");
    cache.find("alice").await();
    routeTo("alice", "s2");

    cache.find("bob").await();

    assertThat(route(cache.find("alice").await())).isEqualTo("s2");
  }

  @Test
  @DisplayName("a login without a card is not cached: its card is found as soon as it is stored")
  void unknownNotCached() {
    DirectoryCache cache = cache(10);
    assertThat(cache.find("carol").await()).isEmpty();

    routeTo("carol", "s1");

    assertThat(route(cache.find("carol").await())).isEqualTo("s1");
  }
}
