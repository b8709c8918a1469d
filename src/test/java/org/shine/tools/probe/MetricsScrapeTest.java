package org.shine.tools.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class MetricsScrapeTest {

  @Test
  @DisplayName("the shine_* counters of a Prometheus text page are kept with their labels, the SQL clients'"
      + " statements are summed over their pools, a histogram's count is kept; gauges, the rest of a histogram and other"
      + " meters are not")
  void keepsShineCounters() {
    String page = String.join("\n",
        "# HELP shine_signature_verifications_total Signature verifications performed",
        "# TYPE shine_signature_verifications_total counter",
        "shine_signature_verifications_total{op=\"dm\"} 1200.0",
        "shine_signature_verifications_total{op=\"auth\"} 100.0",
        "# TYPE shine_db_statements counter",
        "shine_db_statements_total 345.0 1700000000000",
        "# TYPE shine_delivery_due gauge",
        "shine_delivery_due 3.0",
        "# TYPE shine_peer_calls_seconds histogram",
        "shine_peer_calls_seconds_count{peer=\"s3\"} 7.0",
        "shine_peer_calls_seconds_sum{peer=\"s3\"} 0.25",
        "shine_peer_calls_seconds_bucket{peer=\"s3\",le=\"0.1\"} 7.0",
        "# TYPE vertx_http_server_requests_total counter",
        "vertx_http_server_requests_total 9.0",
        "shine_untyped_total 4.0",
        "# TYPE vertx_sql_processing_time_seconds summary",
        "vertx_sql_processing_time_seconds_count{client_namespace=\"shine-pool\"} 120.0",
        "vertx_sql_processing_time_seconds_sum{client_namespace=\"shine-pool\"} 0.5",
        "vertx_sql_processing_time_seconds_count{client_namespace=\"shine-migrate\"} 3.0",
        "");

    assertThat(MetricsScrape.parse(page)).containsOnly(
        entry("shine_signature_verifications_total{op=\"dm\"}", 1200.0),
        entry("shine_signature_verifications_total{op=\"auth\"}", 100.0),
        entry("shine_db_statements_total", 345.0),
        entry("shine_untyped_total", 4.0),
        entry("shine_peer_calls_seconds_count{peer=\"s3\"}", 7.0),
        entry(MetricsScrape.SQL_STATEMENTS, 123.0));
  }
}
