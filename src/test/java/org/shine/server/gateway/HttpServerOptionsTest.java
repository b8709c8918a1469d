package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.http.HttpServerOptions;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.config.ConfigLoader;

/** The options of the node's HTTP port that bound what a connection costs (issue 18). */
class HttpServerOptionsTest {
  private final HttpServerOptions options = HttpEndpoints.serverOptions(ConfigLoader.parse("{}", Map.of()), 60_000);

  @Test
  @DisplayName("strict thread mode: a connection holds no 4 KiB queue for writes from other threads, which an"
      + " upgraded WebSocket would keep for its whole life")
  void strictThreadMode() {
    assertThat(options.getStrictThreadMode()).isTrue();
  }

  @Test
  @DisplayName("permessage-deflate is declined by default (its state would be per session too)")
  void noCompressionByDefault() {
    assertThat(options.getPerMessageWebSocketCompressionSupported()).isFalse();
    assertThat(options.getPerFrameWebSocketCompressionSupported()).isFalse();
  }
}
