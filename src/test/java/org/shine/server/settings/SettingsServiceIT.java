package org.shine.server.settings;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.db.Database;
import org.shine.server.db.SettingsRepository;
import org.shine.server.support.MutableClock;
import org.shine.server.support.Opened;
import org.shine.server.support.TestDatabase;

/** The settings service on a real database, without deploying anything: last writer wins, each write is owed. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class SettingsServiceIT {
  private static final String OUTBOX =
      "SELECT revision, synced FROM sync_outbox WHERE owner = $1 AND item_type = 5 AND item_key = $2 ORDER BY sync_id";

  private final Opened opened = new Opened();
  private final MutableClock clock = new MutableClock(1_000_000);
  private Pool pool;
  private SettingsRepository repository;
  private SettingsService settings;

  @BeforeEach
  void start(Vertx vertx) {
    TestDatabase db = opened.keep(TestDatabase.create(vertx));
    Database.prepare(vertx, db.config()).await();
    pool = opened.pool(db);
    repository = new SettingsRepository(pool);
    settings = new SettingsService(repository, clock);
  }

  @AfterEach
  void close() {
    opened.closeAll();
  }

  @Test
  @DisplayName("a user's later write wins even when the server clock went back, and each write is owed to the"
      + " sibling")
  void laterLocalWriteWins() {
    long first = settings.set(new SetSettingCommand("alice", "theme", "\"dark\"")).await();
    clock.advance(Duration.ofSeconds(-10));

    long second = settings.set(new SetSettingCommand("alice", "theme", "\"light\"")).await();

    assertThat(first).isEqualTo(1_000_000);
    assertThat(second).isEqualTo(first + 1);
    assertThat(settings.settings("alice").await().values()).isEqualTo(Map.of("theme", "\"light\""));
    assertThat(outbox("alice", "theme")).containsExactly(first + ":false", second + ":false");
  }

  @Test
  @DisplayName("a sibling's write is kept only when it is the later one, and arrives synced")
  void siblingWriteKeptOnlyWhenLater() {
    long local = settings.set(new SetSettingCommand("bob", "lang", "\"en\"")).await();

    boolean older = repository.applySynced("bob", "lang", "\"de\"", local - 1, clock.millis()).await();
    boolean later = repository.applySynced("bob", "lang", "\"fr\"", local + 5, clock.millis()).await();

    assertThat(older).isFalse();
    assertThat(later).isTrue();
    assertThat(settings.settings("bob").await().values()).isEqualTo(Map.of("lang", "\"fr\""));
    assertThat(outbox("bob", "lang")).containsExactly(local + ":false", (local + 5) + ":true");
  }

  private List<String> outbox(String owner, String key) {
    List<String> items = new ArrayList<>();
    for (Row row : pool.preparedQuery(OUTBOX).execute(Tuple.of(owner, key)).await()) {
      items.add(row.getLong(0) + ":" + row.getBoolean(1));
    }
    return items;
  }
}
