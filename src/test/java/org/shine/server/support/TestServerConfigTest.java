package org.shine.server.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The fixture's config overrides: JSON objects merged as config files layer, never spliced as text. */
class TestServerConfigTest {

  @Test
  @DisplayName("merge: objects merge key by key at any depth, arrays and values replace, no layer changes")
  void mergesDeep() {
    ObjectNode base = TestServer.json("""
        {"delivery": {"scheduleMs": [0, 400], "workerPeriodMs": 50}, "sync": {"periodMs": 200}}""");
    ObjectNode over = TestServer.json("""
        {"delivery": {"scheduleMs": [0], "callTimeoutMs": 1000}, "peers": []}""");
    String baseBefore = base.toString();
    String overBefore = over.toString();

    ObjectNode merged = TestServer.merge(base, over);

    assertThat(merged).isEqualTo(TestServer.json("""
        {"delivery": {"scheduleMs": [0], "workerPeriodMs": 50, "callTimeoutMs": 1000}, "sync": {"periodMs": 200},
         "peers": []}"""));
    assertThat(base.toString()).isEqualTo(baseBefore);
    assertThat(over.toString()).isEqualTo(overBefore);
    merged.withObject("/sync").put("periodMs", 1);
    assertThat(base.at("/sync/periodMs").asInt()).as("the merge holds copies").isEqualTo(200);
  }

  @Test
  @DisplayName("overrides that are not a JSON object are refused")
  void refusesNonObjects() {
    assertThatThrownBy(() -> TestServer.json("[1, 2]")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("[1, 2]");
  }

  @Test
  @DisplayName("peers: configured peers on loopback, as an object to merge")
  void peersOnLoopback() {
    assertThat(TestServer.peers("s2", 20_001)).isEqualTo(TestServer.json("""
        {"peers": [{"serverLogin": "s2", "url": "ws://127.0.0.1:20001/ws"}]}"""));
  }
}
