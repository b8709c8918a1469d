package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/**
 * What a person or a probe meets on the HTTP port: {@code /} names the server and its endpoints, {@code /ws} over
 * plain HTTP says to use a WebSocket (426), {@code /health} is liveness with its checks (PROTOCOL §12); and the
 * start-up failures a new user trips over name what to change.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class HttpEndpointsIT {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static Vertx vertx;
  private static TestWorld world;
  private static TestServer server;

  @BeforeAll
  static void start() {
    vertx = Vertx.vertx();
    world = TestWorld.on(vertx);
    server = world.server("s1");
  }

  @AfterAll
  static void stop() {
    world.close();
    vertx.close().await();
  }

  @Test
  @DisplayName("GET / names the server and its endpoints")
  void rootNamesTheServer() throws Exception {
    HttpResponse<String> response = get("/");

    assertThat(response.statusCode()).isEqualTo(200);
    JsonNode body = Json.MAPPER.readTree(response.body());
    assertThat(body.path("serverLogin").asText()).isEqualTo("s1");
    assertThat(body.path("url").asText()).isEqualTo(server.url());
    assertThat(body.path("endpoints").has("/ws")).isTrue();
    assertThat(body.path("endpoints").has("/app/")).isTrue();
    assertThat(body.path("endpoints").has("/ready")).isTrue();
    assertThat(body.path("endpoints").has("/metrics")).isTrue();
    assertThat(body.path("endpoints").has("/health")).isTrue();
  }

  @Test
  @DisplayName("GET /ws without a WebSocket upgrade answers 426 saying to use a WebSocket client")
  void plainHttpOnTheWebSocketEndpoint() throws Exception {
    HttpResponse<String> response = get("/ws");

    assertThat(response.statusCode()).isEqualTo(426);
    assertThat(response.headers().firstValue("upgrade")).hasValue("websocket");
    JsonNode error = Json.MAPPER.readTree(response.body()).path("error");
    assertThat(error.path("code").asText()).isEqualTo("UPGRADE_REQUIRED");
    assertThat(error.path("message").asText()).contains("WebSocket");
  }

  @Test
  @DisplayName("GET /health is liveness: UP with the event-loop check in the §12 shape")
  void healthIsLiveness() throws Exception {
    HttpResponse<String> response = get("/health");

    assertThat(response.statusCode()).isEqualTo(200);
    JsonNode body = Json.MAPPER.readTree(response.body());
    assertThat(body.path("status").asText()).isEqualTo("UP");
    JsonNode loops = body.path("checks").path("eventLoops");
    assertThat(loops.path("status").asText()).isEqualTo("UP");
    assertThat(loops.path("count").asInt()).isPositive();
    assertThat(loops.path("silent").asInt()).isZero();
  }

  @Test
  @DisplayName("GET /ready answers every one of many requests at once: each on its own connection's event loop, though"
      + " they join one database check started on another (the HTTP server runs in strict thread mode)")
  void readyUnderConcurrentRequests() throws Exception {
    List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      answers.add(HTTP.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/ready"))
          .timeout(Duration.ofSeconds(20)).GET().build(), HttpResponse.BodyHandlers.ofString()));
    }

    for (CompletableFuture<HttpResponse<String>> answer : answers) {
      assertThat(answer.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
  }

  @Test
  @DisplayName("a port in use fails the start with the port and the setting named")
  void portInUseIsNamed() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();

      Throwable failure = catchThrowable(() -> TestServer.start("s2", world.database().config(), Clock.systemUTC(),
          "{}", port).close());

      assertThat(failure).hasMessageContaining("127.0.0.1:" + port).hasMessageContaining("http.port")
          .hasMessageContaining("Address already in use");
    }
  }

  @Test
  @DisplayName("an unreachable database is one line naming host:port and the settings")
  void unreachableDatabaseIsNamed() throws Exception {
    int closedPort = TestServer.freePort();
    AppConfig.Db db = new AppConfig.Db("127.0.0.1", closedPort, "nowhere", "postgres", "", 1, 2_000, 2_000);

    Throwable failure = catchThrowable(() -> Database.prepare(vertx, db).await(20, TimeUnit.SECONDS));

    assertThat(failure).hasMessageStartingWith("cannot reach PostgreSQL at 127.0.0.1:" + closedPort)
        .hasMessageContaining("db.host").hasMessageContaining("SHINE_DB_PORT");
    assertThat(failure.getMessage()).doesNotContain("\n");
  }

  private static HttpResponse<String> get(String path) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
        .timeout(Duration.ofSeconds(20)).GET().build(), HttpResponse.BodyHandlers.ofString());
  }
}
