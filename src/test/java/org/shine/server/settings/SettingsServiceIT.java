package org.shine.server.settings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.db.QuotaExceededException;
import org.shine.server.db.SettingsRepository;
import org.shine.server.support.MutableClock;
import org.shine.server.support.Opened;
import org.shine.server.support.TestDatabase;

/**
 * The settings service on a real database, without deploying anything: last writer wins, each write is owed, the
 * quotas of PROTOCOL §13 hold under concurrent writes, and pages stay under the response bytes.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class SettingsServiceIT {
  private static final String OUTBOX =
      "SELECT revision, synced FROM sync_outbox WHERE owner = $1 AND item_type = 5 AND item_key = $2 ORDER BY sync_id";

  private static final int COUNT_QUOTA = 4;
  private static final long BYTES_QUOTA = 2_048;
  private static final int MAX_RESPONSE_BYTES = 2_600;
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
    repository = new SettingsRepository(pool, new AppConfig.Quotas(COUNT_QUOTA, BYTES_QUOTA), "s1");
    settings = new SettingsService(repository, clock, MAX_RESPONSE_BYTES);
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
    assertThat(all("alice")).isEqualTo(Map.of("theme", "\"light\""));
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
    assertThat(all("bob")).isEqualTo(Map.of("lang", "\"fr\""));
    assertThat(outbox("bob", "lang")).containsExactly(local + ":false", (local + 5) + ":true");
  }

  @Test
  @DisplayName("quotas.settingsCount: a new key beyond the count is 413-worthy QuotaExceededException naming the"
      + " quota and stores nothing; replacing a key already held is counted once and still allowed")
  void countQuota() {
    for (int i = 0; i < COUNT_QUOTA; i++) {
      settings.set(new SetSettingCommand("carol", "k" + i, "1")).await();
    }

    assertThatThrownBy(() -> settings.set(new SetSettingCommand("carol", "k9", "1")).await())
        .isInstanceOfSatisfying(QuotaExceededException.class, e -> {
          assertThat(e.quota()).isEqualTo("quotas.settingsCount");
          assertThat(e.getMessage()).startsWith("quotas.settingsCount: carol keeps 4 settings");
        });
    settings.set(new SetSettingCommand("carol", "k0", "2")).await();

    assertThat(all("carol")).containsOnlyKeys("k0", "k1", "k2", "k3").containsEntry("k0", "2");
    assertThat(outbox("carol", "k9")).isEmpty();
  }

  @Test
  @DisplayName("quotas.settingsBytes counts the bytes of keys and values as stored (UTF-8); a write that would pass"
      + " it is refused unless it shrinks what the owner holds")
  void bytesQuota() {
    String big = "\"" + "é".repeat(450) + "\"";
    settings.set(new SetSettingCommand("dave", "a", big)).await();
    settings.set(new SetSettingCommand("dave", "b", big)).await();
    assertThat(usedBytes("dave")).isEqualTo(2 * (1 + 902));

    assertThatThrownBy(() -> settings.set(new SetSettingCommand("dave", "c", big)).await())
        .isInstanceOfSatisfying(QuotaExceededException.class, e -> assertThat(e.quota())
            .isEqualTo("quotas.settingsBytes"));

    // GIVEN the owner above the quota (sync may bring up to twice it), WHEN a value is replaced by a smaller one
    // that still leaves the owner above the quota, THEN it is allowed: it shrinks what is held
    String bigger = "\"" + "é".repeat(700) + "\"";
    assertThat(repository.applySynced("dave", "c", bigger, clock.millis() + 10, clock.millis()).await()).isTrue();
    assertThat(usedBytes("dave")).isGreaterThan(BYTES_QUOTA);
    settings.set(new SetSettingCommand("dave", "c", big)).await();
    assertThatThrownBy(() -> settings.set(new SetSettingCommand("dave", "c", bigger)).await())
        .as("growing again above the quota").isInstanceOf(QuotaExceededException.class);
    assertThat(all("dave").get("c")).isEqualTo(big);
  }

  @Test
  @DisplayName("settings from the sibling may take an owner up to twice the quotas, not beyond; one that loses to"
      + " the stored value passes whatever the quota")
  void syncedUpToTwice() {
    for (int i = 0; i < 2 * COUNT_QUOTA; i++) {
      assertThat(repository.applySynced("erin", "s" + i, "1", 10, clock.millis()).await()).isTrue();
    }

    assertThatThrownBy(() -> repository.applySynced("erin", "s9", "1", 10, clock.millis()).await())
        .isInstanceOfSatisfying(QuotaExceededException.class, e -> {
          assertThat(e.quota()).isEqualTo("quotas.settingsCount");
          assertThat(e.getMessage()).contains("2x for settings from the sibling");
        });
    assertThatThrownBy(() -> settings.set(new SetSettingCommand("erin", "local", "1")).await())
        .isInstanceOf(QuotaExceededException.class);
    assertThat(repository.applySynced("erin", "s0", "1", 9, clock.millis()).await()).as("an older write").isFalse();
    assertThat(all("erin")).hasSize(2 * COUNT_QUOTA);
  }

  @Test
  @DisplayName("20 concurrent writes of new keys by one owner: exactly the quota's worth is stored, the rest refused")
  void concurrentWritesDoNotBothPass() {
    List<Future<Long>> writes = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      writes.add(settings.set(new SetSettingCommand("frank", "c" + i, "1")));
    }
    Future.join(new ArrayList<>(writes)).otherwiseEmpty().await();

    assertThat(writes.stream().filter(Future::succeeded).count()).isEqualTo(COUNT_QUOTA);
    assertThat(writes.stream().filter(Future::failed).map(Future::cause))
        .allSatisfy(cause -> assertThat(cause).isInstanceOf(QuotaExceededException.class));
    assertThat(all("frank")).hasSize(COUNT_QUOTA);
  }

  @Test
  @DisplayName("pages come in key order (code points), each within the response bytes and the limit, with nextKey"
      + " as the afterKey of the next page, and together hold every setting once")
  void pages() {
    String value = "\"" + "v".repeat(600) + "\"";
    List<String> keys = List.of("b", "a", "é", "Z", "ab");
    for (String key : keys) {
      repository.applySynced("gina", key, value, 10, clock.millis()).await();
    }

    List<String> seen = new ArrayList<>();
    String after = null;
    int pages = 0;
    do {
      SettingsPage page = settings.page(new SettingsQuery("gina", after, 1_000)).await();
      assertThat(page.settings()).isNotEmpty().hasSizeLessThanOrEqualTo(2);
      page.settings().forEach(setting -> seen.add(setting.key()));
      after = page.nextKey();
      pages++;
    } while (after != null);

    assertThat(seen).containsExactly("Z", "a", "ab", "b", "é");
    assertThat(pages).as("two settings of 600 bytes fit in 2,600 bytes with the envelope, three do not")
        .isEqualTo(3);
    SettingsPage limited = settings.page(new SettingsQuery("gina", "a", 2)).await();
    assertThat(limited.settings()).extracting(SettingsRepository.Setting::key).containsExactly("ab", "b");
    assertThat(limited.nextKey()).isEqualTo("b");
    assertThat(settings.page(new SettingsQuery("gina", "é", 10)).await().settings()).isEmpty();
  }

  private Map<String, String> all(String owner) {
    Map<String, String> values = new HashMap<>();
    for (SettingsRepository.Setting setting : repository.page(owner, null, 10_000).await()) {
      values.put(setting.key(), setting.valueJson());
    }
    return values;
  }

  private long usedBytes(String owner) {
    return pool.preparedQuery("SELECT sum(octet_length(key) + octet_length(value_json)) FROM user_setting"
        + " WHERE owner = $1").execute(Tuple.of(owner)).await().iterator().next().getLong(0);
  }

  private List<String> outbox(String owner, String key) {
    List<String> items = new ArrayList<>();
    for (Row row : pool.preparedQuery(OUTBOX).execute(Tuple.of(owner, key)).await()) {
      items.add(row.getLong(0) + ":" + row.getBoolean(1));
    }
    return items;
  }
}
