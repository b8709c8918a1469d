package org.shine.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.db.Database;
import org.shine.server.support.MutableClock;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/** {@code GET /metrics} (PROTOCOL §12): Prometheus text from each node's own registry, over real HTTP. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class MetricsIT {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final MutableClock CLOCK = MutableClock.now();
  private static final String MESSAGES = "shine_signature_verifications_total{op=\"message\"}";
  private static final String STATEMENTS =
      "vertx_sql_processing_time_seconds_count{client_namespace=\"" + Database.SHARED_METRICS_NAME + "\"}";
  private static TestWorld world;
  private static Vertx vertx;
  private static TestServer server;
  private static TestUser alice;
  private static TestUser bob;

  @BeforeAll
  static void startServer() {
    world = TestWorld.on(Vertx.vertx()).clock(CLOCK);
    vertx = world.vertx();
    server = world.server("s1");
    alice = world.user("alice", server);
    bob = world.user("bob", server);
  }

  @AfterAll
  static void stopServer() {
    world.close();
    vertx.close().await();
  }

  @Test
  @DisplayName("GET /metrics answers Prometheus text with every signature op and the Vert.x and JVM meters")
  void servesPrometheusText() throws Exception {
    HttpResponse<String> response = get(server, "/metrics");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("content-type")).hasValueSatisfying(
        type -> assertThat(type).startsWith("text/plain"));
    String text = response.body();
    for (SignatureOp op : SignatureOp.values()) {
      assertThat(text).contains("shine_signature_verifications_total{op=\"" + op.tag() + "\"}");
    }
    // the two cards published at start were verified
    assertThat(value(text, "shine_signature_verifications_total{op=\"card\"}")).isGreaterThanOrEqualTo(2);
    assertThat(text).contains("vertx_http_server_requests_total", "vertx_eventbus_", "vertx_pool_",
        STATEMENTS, "jvm_memory_used_bytes");
  }

  @Test
  @DisplayName("a signed send counts its two message verifications and moves the shared pool's statement count")
  void sendMovesTheCounters() throws Exception {
    ShineClient session = alice.session(vertx, server);
    String before = get(server, "/metrics").body();

    SignedPair pair = ShineClient.signPair("alice", alice.key(), bob.login(), CLOCK.millis(),
        ShineClient.randomNonce(), 0, "hi bob".getBytes(StandardCharsets.UTF_8));
    session.sendPair(pair).await();
    String after = get(server, "/metrics").body();

    assertThat(value(after, MESSAGES) - value(before, MESSAGES)).isEqualTo(2);
    assertThat(value(after, STATEMENTS)).isGreaterThan(value(before, STATEMENTS));
    session.close().await();
  }

  @Test
  @DisplayName("each node counts on its own registry, and metrics.enabled false serves no /metrics")
  void ownRegistryOrNone() throws Exception {
    try (TestWorld own = world.child()) {
      TestServer other = own.server("s2");
      TestServer off = own.server("s3", "{\"metrics\": {\"enabled\": false}}");
      assertThat(value(get(other, "/metrics").body(), "shine_signature_verifications_total{op=\"card\"}"))
          .isZero();

      assertThat(get(off, "/metrics").statusCode()).isEqualTo(404);
      assertThat(get(off, "/health").statusCode()).isEqualTo(200);
    }
  }

  private static HttpResponse<String> get(TestServer target, String path) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + target.port() + path))
        .timeout(Duration.ofSeconds(20)).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The value of one series ({@code name{labels}}) in a scrape. */
  private static double value(String scrape, String series) {
    return scrape.lines().filter(line -> line.startsWith(series + " ")).findFirst()
        .map(line -> Double.parseDouble(line.substring(series.length() + 1).trim()))
        .orElseThrow(() -> new AssertionError(series + " is not in the scrape:\n" + scrape));
  }
}
