package org.shine.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
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
}
