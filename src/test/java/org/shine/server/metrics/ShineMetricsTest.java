package org.shine.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The labels of the {@code shine_*} meters (PROTOCOL §12) as a scrape shows them. */
class ShineMetricsTest {
  private final ShineMetrics metrics = ShineMetrics.forNode("t1", true);
  private final PrometheusMeterRegistry registry = metrics.scrapeRegistry().orElseThrow();

  @Test
  @DisplayName("the attempt label is 1 to 5 from the schedule point or extra, later points count under 5")
  void attemptLabels() {
    for (int attempt = 1; attempt <= 7; attempt++) {
      metrics.attempted(attempt, false, AttemptOutcome.NOT_DELIVERED);
    }
    metrics.attempted(2, true, AttemptOutcome.DELIVERED);

    String text = registry.scrape();
    for (int attempt = 1; attempt <= 4; attempt++) {
      assertThat(text).contains("shine_delivery_attempts_total{attempt=\"" + attempt
          + "\",outcome=\"not_delivered\"} 1.0");
    }
    assertThat(text).contains("shine_delivery_attempts_total{attempt=\"5\",outcome=\"not_delivered\"} 3.0",
        "shine_delivery_attempts_total{attempt=\"extra\",outcome=\"delivered\"} 1.0");
    assertThat(text).doesNotContain("attempt=\"6\"", "attempt=\"7\"");
  }

  @Test
  @DisplayName("peer and sibling labels keep the first 1,000 servers and name every later one other")
  void serverLabelsAreBounded() {
    for (int i = 0; i < ShineMetrics.MAX_SERVER_LABELS + 50; i++) {
      metrics.peerUp("p" + i, true);
    }
    metrics.peerCall("p5", "ReceiveIncomingMessage", PeerCallOutcome.OK, 1_000_000);
    metrics.peerCall("q-beyond", "ReceiveIncomingMessage", PeerCallOutcome.TIMEOUT, 1_000_000);
    metrics.syncLag(Map.of("z-beyond", 3L, "p7", 2L));

    String text = registry.scrape();
    long peerSeries = text.lines().filter(line -> line.startsWith("shine_peer_up{")).count();
    assertThat(peerSeries).isEqualTo(ShineMetrics.MAX_SERVER_LABELS + 1);
    assertThat(text).contains("shine_peer_up{peer=\"p999\"} 1.0", "shine_peer_up{peer=\"other\"} 1.0",
        "shine_sync_lag_items{sibling=\"other\"} 3.0", "shine_sync_lag_items{sibling=\"p7\"} 2.0")
        .contains("shine_peer_calls_seconds_count{op=\"ReceiveIncomingMessage\",outcome=\"ok\",peer=\"p5\"} 1")
        .contains("shine_peer_calls_seconds_count{op=\"ReceiveIncomingMessage\",outcome=\"timeout\",peer=\"other\"} 1")
        .doesNotContain("peer=\"p1000\"", "q-beyond", "z-beyond");
  }

  @Test
  @DisplayName("a sibling that no longer owes anything drops to 0; session kinds move on login and close")
  void gaugesFollowTheirSource() {
    metrics.syncLag(Map.of("s2", 4L));
    metrics.syncLag(Map.of());
    metrics.sessionOpened();
    metrics.sessionOpened();
    metrics.sessionChanged(SessionKind.UNAUTHENTICATED, SessionKind.CLIENT);
    metrics.sessionClosed(SessionKind.UNAUTHENTICATED);

    String text = registry.scrape();
    assertThat(text).contains("shine_sync_lag_items{sibling=\"s2\"} 0.0", "shine_ws_sessions{kind=\"client\"} 1.0",
        "shine_ws_sessions{kind=\"unauthenticated\"} 0.0", "shine_ws_sessions{kind=\"server\"} 0.0");
    for (SendOutcome outcome : SendOutcome.values()) {
      assertThat(text).contains("shine_sends_total{outcome=\"" + outcome.tag() + "\"} 0.0");
    }
    assertThat(text).contains("shine_delivery_transitions_total{state=\"delivered\"} 0.0",
        "shine_delivery_transitions_total{state=\"failed\"} 0.0", "shine_delivery_due 0.0",
        "shine_delivery_accepted 0.0", "shine_hub_queue_depth 0.0");
  }
}
