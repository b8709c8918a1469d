package org.shine.server.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.support.Sql;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/**
 * MarkAllUserSettingsUnsynced is limited per user (PROTOCOL §8 v3, {@code sync.markAllPerUserPerMin}, default once a
 * minute): beyond, 429 RATE_LIMITED and nothing is reset; each user has a limit of its own. (The bound on the users
 * tracked at once is {@code PerKeyRateTest}'s.)
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class FullResyncIT {
  private TestWorld world;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx);
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("a second MarkAllUserSettingsUnsynced in the same minute is 429 RATE_LIMITED with a clear message"
      + " and resets nothing; another user's still goes through")
  void oncePerMinute() {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    TestUser bob = world.user("bob", s1);
    ShineClient session = world.session(alice, s1);
    session.request("SetUserSetting", ShineClient.object().put("key", "theme").put("value", "dark")).await();
    Sql sql = world.sql(s1);
    // as if a sibling had ACKed the setting
    sql.rows("UPDATE sync_outbox SET synced = true WHERE owner = 'alice'");

    assertThat(session.request("MarkAllUserSettingsUnsynced", ShineClient.object()).await().get("reset").asInt())
        .isEqualTo(1);
    sql.rows("UPDATE sync_outbox SET synced = true WHERE owner = 'alice'");

    assertThatThrownBy(() -> session.request("MarkAllUserSettingsUnsynced", ShineClient.object()).await())
        .isInstanceOfSatisfying(ShineClientException.class, e -> {
          assertThat(e.status()).isEqualTo(429);
          assertThat(e.code()).isEqualTo(ErrorCode.RATE_LIMITED);
          assertThat(e.getMessage()).contains("1 per minute per user", "nothing was reset");
        });
    assertThat(sql.count("SELECT count(*) FROM sync_outbox WHERE owner = 'alice' AND NOT synced")).isZero();
    assertThat(world.session(bob, s1).request("MarkAllUserSettingsUnsynced", ShineClient.object()).await()
        .get("reset").asInt()).isZero();
    // the session survives the refusal
    assertThat(session.request("GetUserSettings", ShineClient.object()).await().at("/settings/theme").asText())
        .isEqualTo("dark");
  }
}
