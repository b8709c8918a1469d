package org.shine.server.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.dm.KeyFile;
import org.shine.server.model.StoredUser;
import org.shine.server.model.UserCard;
import org.shine.server.support.Opened;
import org.shine.server.support.TestDatabase;

/** A user as every login reads it (card and routes in one statement), over a real database. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class DirectoryRepositoryIT {
  private final Opened opened = new Opened();
  private Pool pool;
  private DirectoryRepository repository;

  @BeforeEach
  void setUp(Vertx vertx) {
    TestDatabase db = opened.keep(TestDatabase.create(vertx));
    Database.prepare(vertx, db.config()).await();
    pool = opened.pool(db);
    repository = new DirectoryRepository(pool);
  }

  @AfterEach
  void close() {
    opened.closeAll();
  }

  private KeyFile card(String login, long version) {
    KeyFile key = KeyFile.generate(login);
    pool.preparedQuery("INSERT INTO user_card (login, public_key, version, device_keys, card_json, updated_at_ms)"
        + " VALUES ($1, $2, $3, $4, $5, 0)").execute(Tuple.of(login, Buffer.buffer(key.publicKey()), version,
        Base64.getEncoder().encodeToString(key.publicKey()), "{\"login\":\"" + login + "\"}")).await();
    return key;
  }

  private void route(String login, int position, String serverLogin) {
    pool.preparedQuery("INSERT INTO user_access_servers_current (login, position, server_login, url)"
        + " VALUES ($1, $2, $3, $4)").execute(Tuple.of(login, (short) position, serverLogin,
        "ws://127.0.0.1:710" + position + "/ws")).await();
  }

  @Test
  @DisplayName("a user is its key, version, card and routes in their order")
  void userWithTwoRoutes() {
    KeyFile key = card("alice", 3);
    route("alice", 1, "s2");
    route("alice", 0, "s1");

    StoredUser alice = repository.find("alice").await().orElseThrow();

    assertThat(alice.keys().currentKeys()).containsExactly(key.publicKey());
    assertThat(alice.version()).isEqualTo(3);
    assertThat(alice.cardJson()).isEqualTo("{\"login\":\"alice\"}");
    assertThat(alice.routes()).containsExactly(new UserCard.Route("s1", "ws://127.0.0.1:7100/ws"),
        new UserCard.Route("s2", "ws://127.0.0.1:7101/ws"));
  }

  @Test
  @DisplayName("a card without routes reads with none; an unknown login reads as empty")
  void noRoutesAndUnknown() {
    card("bob", 1);

    assertThat(repository.find("bob").await().orElseThrow().routes()).isEmpty();
    assertThat(repository.find("carol").await()).isEmpty();
  }
}
