package org.shine.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;
import org.shine.server.support.LogCapture;
import org.shine.server.support.Scrape;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestWorld;

/** A server start with metrics on registers each pool's meters (issue 19: no "already registered" warning for them). */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class QuietStartIT {

  @Test
  @DisplayName("each pool of a started server has meters of its own: the shared pool's and the health probe's do not"
      + " collide under Vert.x's default pool name")
  void poolsHaveMetersOfTheirOwn(Vertx vertx) {
    TestWorld world = TestWorld.on(vertx);
    try {
      TestServer server = world.server("s1");
      String text = Scrape.of(server).text();
      assertThat(text).contains("vertx_pool_queue_pending{pool_name=\"shine-pool:")
          .contains("vertx_pool_queue_pending{pool_name=\"shine-health\"")
          .doesNotContain("pool_name=\"__vertx.DEFAULT\"");
    } finally {
      world.close();
    }
  }

  @Test
  @DisplayName("a server starts and takes its peers' calls without one warning in its log (the TCP clients'"
      + " unlabelled gauge and the SQL client's per-connection gauge, registered twice, once warned at every start)")
  void noWarningAtStart(Vertx vertx) {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    ListAppender<ILoggingEvent> events = new ListAppender<>();
    events.start();
    root.addAppender(events);
    TestWorld world = TestWorld.on(vertx);
    try {
      TestServer[] servers = world.servers("s1", "s2");
      String text = Scrape.of(servers[0]).text();
      // the SQL client's meters are made once per database connection: its in-flight gauge is not kept
      assertThat(text).contains("vertx_pool_queue_pending").doesNotContain("vertx_net_client")
          .doesNotContain("vertx_sql_processing_pending").contains("vertx_sql_processing_time_seconds_count")
          .doesNotContain("vertx_eventbus_handlers").doesNotContain("vertx_eventbus_pending")
          .contains("vertx_eventbus_sent_total");
      assertThat(events.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
          .map(e -> e.getLoggerName() + ": " + e.getFormattedMessage())).isEmpty();
    } finally {
      root.detachAppender(events);
      world.close();
    }
  }

  @Test
  @DisplayName("a peer that comes back is dialed again without a warning (the WebSocket client makes a new pool for"
      + " its address, whose gauges were refused as already registered at every reconnection)")
  void noWarningOnReconnection(Vertx vertx) {
    TestWorld world = TestWorld.on(vertx);
    try {
      TestServer[] servers = world.servers("s1", "s2");
      world.awaitPeersUp(servers[0], servers[1]);
      try (LogCapture warnings = LogCapture.of(org.slf4j.Logger.ROOT_LOGGER_NAME, Level.WARN)) {
        TestServer back = world.restart(servers[1]);
        world.awaitPeersUp(servers[0], back);
        assertThat(warnings.text()).isEmpty();
        // the peer clients' pools, one per peer address, are made again at each reconnection: none has meters
        assertThat(Scrape.of(servers[0]).text()).contains("shine_peer_", "pool_type=\"sql\"")
            .doesNotContain("pool_type=\"ws\"").doesNotContain("pool_type=\"http\"");
      }
    } finally {
      world.close();
    }
  }
}
