package org.shine.server.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.support.Eventually;

/**
 * A server that takes the connection and never answers the WebSocket upgrade (a request lost at its start-up) costs
 * a client its connect timeout, not its session for good: the connect fails, and the caller can connect again.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class HandshakeTimeoutIT {
  @Test
  @DisplayName("a WebSocket upgrade that is never answered fails after the handshake timeout")
  void unansweredUpgradeFails(Vertx vertx) {
    AtomicInteger connections = new AtomicInteger();
    NetServer silent = vertx.createNetServer().connectHandler(socket -> connections.incrementAndGet());
    silent.listen(0, "127.0.0.1").await();
    try {
      Future<ShineClient> connect = ShineClient.connect(vertx, "ws://127.0.0.1:" + silent.actualPort() + "/ws");

      Eventually.until("the connect fails", ShineClient.HANDSHAKE_TIMEOUT_MS + 10_000, connect::failed);
      assertThat(connections.get()).isEqualTo(1);
    } finally {
      silent.close().await();
    }
  }
}
