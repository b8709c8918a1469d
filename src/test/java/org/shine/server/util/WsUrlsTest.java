package org.shine.server.util;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class WsUrlsTest {

  @ParameterizedTest
  @ValueSource(strings = {"ws://127.0.0.1:7101/ws", "wss://example.org/ws", "ws://[::1]:1/ws", "ws://h:65535",
      "ws://127.0.0.1:6/\u00e9"})
  @DisplayName("a ws:// or wss:// URL with a host and a port a socket can have is a server URL")
  void serverUrls(String url) {
    assertThat(WsUrls.isWsUrl(url)).isTrue();
  }

  /**
   * Found by CardFuzzIT: a card routing to ws://127.0.0.1:99999/ws was accepted, and relaying it to that route
   * failed inside the WebSocket client with an internal error.
   */
  @ParameterizedTest
  @ValueSource(strings = {"ws://127.0.0.1:99999/ws", "ws://127.0.0.1:65536/ws", "ws://127.0.0.1:0/ws",
      "ws://127.0.0.1:-1/ws", "http://127.0.0.1:1/ws", "ws:/127.0.0.1/ws", "ws://127.0.0.1:1/ws\u0000", ""})
  @DisplayName("a URL without a usable port, host or ws scheme is not")
  void notServerUrls(String url) {
    assertThat(WsUrls.isWsUrl(url)).isFalse();
  }
}
