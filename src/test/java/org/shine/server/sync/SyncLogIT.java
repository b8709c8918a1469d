package org.shine.server.sync;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.support.Eventually;
import org.shine.server.support.LogCapture;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/**
 * The INFO log of two siblings that pull from each other every 100 ms: a pull that moves something is one INFO
 * line, the periodic pulls that find nothing new are DEBUG only (they used to repeat at INFO every period).
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 90, timeUnit = TimeUnit.SECONDS)
class SyncLogIT {
  private static final String PULL_EVERY_100_MS = "{\"sync\": {\"periodMs\": 100}}";

  @Test
  @DisplayName("an empty periodic sync pull logs at DEBUG; a pull that stores items logs one INFO line")
  void emptyPullsStayOutOfTheInfoLog(Vertx vertx) {
    try (TestWorld world = TestWorld.on(vertx).config(PULL_EVERY_100_MS)) {
      TestServer[] servers = world.servers("s1", "s2");
      TestServer s1 = servers[0];
      TestUser alice = world.user("alice", s1, servers[1]);
      world.user("bob", s1);
      try (LogCapture log = LogCapture.of("org.shine.server.sync", Level.DEBUG)) {
        // GIVEN the siblings have pulled at least once since the capture began
        Eventually.until("a periodic pull", 20_000, () -> log.text().contains("sync pull"));

        // WHEN alice sends on s1 (the forward or s2's next pull carries the pair to s2), then many pulls find nothing
        ShineClient session = world.session(alice, s1);
        session.sendText("alice", alice.key(), "bob", "one item to sync").await();
        session.close().await();
        Eventually.until("ten empty pulls", 20_000, () -> count(log.text(), "sync pull: nothing new") >= 10);

        // THEN only pulls that moved something, or saw the backlog change, reached INFO: far fewer than the pulls
        String text = log.text();
        long info = text.lines().filter(line -> line.contains(" INFO ") && line.contains("sync pull [")).count();
        assertThat(info).isLessThanOrEqualTo(6);
        assertThat(text.lines().filter(line -> line.contains("sync pull: nothing new"))
            .allMatch(line -> line.contains(" DEBUG "))).isTrue();
      }
    }
  }

  private static long count(String text, String needle) {
    return text.lines().filter(line -> line.contains(needle)).count();
  }
}
