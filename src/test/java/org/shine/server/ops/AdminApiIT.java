package org.shine.server.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.cli.AdminCommand;
import org.shine.server.cli.CliFailure;
import org.shine.server.client.ShineClient;
import org.shine.server.config.ConfigException;
import org.shine.server.config.ConfigLoader;
import org.shine.server.support.Eventually;
import org.shine.server.support.MutableClock;
import org.shine.server.support.Scrape;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;
import picocli.CommandLine;

/**
 * The admin API (PROTOCOL §12) and the {@code admin} subcommand against a real federation in a known state: s1 (the
 * node under test, its admin listener on, its configured peer s2 up), s9 a server that is down; alice on s1 has one
 * delivery to carol (only on s9) that failed after the whole schedule and one that is still accepted; frank is on
 * s1 and s9, so his sent pair waits in s1's outbox for s9. s1 runs on a clock the test moves.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class AdminApiIT {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final MutableClock CLOCK = MutableClock.now();
  private static Vertx vertx;
  private static TestWorld world;
  private static TestServer s1;
  private static TestServer s2;
  private static int adminPort;
  private static String failedKey;
  private static String acceptedKey;
  private static long acceptedAtMs;
  private static ShineClient aliceSession;
  private static String deadServer;

  @BeforeAll
  static void startFederation() {
    vertx = Vertx.vertx();
    world = TestWorld.on(vertx).sites("s1", "s2");
    Map.Entry<String, String> dead = TestWorld.deadRoute();
    deadServer = dead.getKey();
    adminPort = TestServer.freePort();
    s2 = world.server("s2");
    s1 = world.clock(CLOCK).server("s1", TestServer.merge(
        TestServer.json("{\"delivery\": {\"workerPeriodMs\": 50, \"callTimeoutMs\": 1000}}"),
        TestServer.admin(adminPort)));
    TestUser alice = world.user("alice", TestWorld.routes(s1), s1, s2);
    world.user("carol", List.of(dead), s1);
    TestUser frank = world.user("frank", List.of(Map.entry("s1", s1.url()), dead), s1);
    aliceSession = world.session(alice, s1);
    // GIVEN one delivery that ran its whole schedule (an hour on s1's clock) without an ACK ...
    failedKey = send(aliceSession, alice, "carol", "first").path("outgoingKey").asText();
    CLOCK.advance(Duration.ofMinutes(61));
    Eventually.until("the first delivery fails", 30_000, () -> rows("failed").size() == 1);
    // ... and one that is accepted, its second attempt 30 s away
    acceptedAtMs = CLOCK.millis();
    acceptedKey = send(aliceSession, alice, "carol", "second").path("outgoingKey").asText();
    ShineClient frankSession = frank.session(vertx, s1);
    send(frankSession, frank, "alice", "hi alice");
    frankSession.close().await();
  }

  @AfterAll
  static void stopFederation() {
    world.close();
    vertx.close().await();
  }

  @Test
  @DisplayName("the API's root (the URL a start prints) lists the endpoints")
  void index() {
    for (String root : new String[] {"", "/"}) {
      JsonNode body = get(root);
      assertThat(body.path("serverLogin").asText()).isEqualTo("s1");
      assertThat(body.path("endpoints").has("GET /admin/v1/peers")).isTrue();
      assertThat(body.path("endpoints").has("GET /admin/v1/users/{login}")).isTrue();
    }
  }

  @Test
  @DisplayName("peers: the configured peer connected and authenticated, the dead server down with its error")
  void peers() {
    Eventually.until("s2 is authenticated", 20_000, () -> peer(get("/peers"), "s2").path("authenticated")
        .asBoolean());
    JsonNode body = get("/peers");

    assertThat(body.path("serverLogin").asText()).isEqualTo("s1");
    JsonNode s2Peer = peer(body, "s2");
    assertThat(s2Peer.path("url").asText()).isEqualTo(s2.url());
    assertThat(s2Peer.path("configured").asBoolean()).isTrue();
    assertThat(s2Peer.path("connected").asBoolean()).isTrue();
    assertThat(s2Peer.path("down").asBoolean()).isFalse();
    assertThat(s2Peer.path("backoffMs").asLong()).isZero();
    JsonNode dead = peer(body, deadServer);
    assertThat(dead.path("configured").asBoolean()).isFalse();
    assertThat(dead.path("down").asBoolean()).isTrue();
    assertThat(dead.path("lastError").asText()).startsWith("connect failed");
    assertThat(dead.path("backoffMs").asLong()).isPositive();
  }

  @Test
  @DisplayName("deliveries: the failed row after five attempts, the accepted one with its next attempt and due time")
  void deliveries() {
    List<JsonNode> failed = rows("failed");
    assertThat(failed).hasSize(1);
    assertThat(failed.get(0).path("baseKey").asText() + "|2").isEqualTo(failedKey);
    assertThat(failed.get(0).path("attempts").asInt()).isEqualTo(5);
    assertThat(failed.get(0).path("nextAttemptAtMs").isNull()).isTrue();
    assertThat(failed.get(0).path("recipient").asText()).isEqualTo("carol");

    JsonNode accepted = rows("accepted").stream().filter(r -> (r.path("baseKey").asText() + "|2")
        .equals(acceptedKey)).findFirst().orElseThrow();
    assertThat(accepted.path("owner").asText()).isEqualTo("alice");
    assertThat(accepted.path("attempts").asInt()).isEqualTo(1);
    assertThat(accepted.path("nextAttempt").asInt()).isEqualTo(2);
    assertThat(accepted.path("nextAttemptAtMs").asLong()).isBetween(acceptedAtMs + 29_000, acceptedAtMs + 31_000);
  }

  @Test
  @DisplayName("deliveries refuses a state or limit it does not know with 400 and a code")
  void deliveriesRefusesBadQueries() {
    assertThat(request("GET", "/deliveries?state=delivered").statusCode()).isEqualTo(400);
    HttpResponse<String> badLimit = request("GET", "/deliveries?limit=0");
    assertThat(badLimit.statusCode()).isEqualTo(400);
    assertThat(json(badLimit).path("error").path("code").asText()).isEqualTo("INVALID_FIELD");
    assertThat(request("GET", "/nothing").statusCode()).isEqualTo(404);
  }

  @Test
  @DisplayName("retry-peer gives the accepted rows routed to that server an extra attempt now; the schedule stays")
  void retryPeer() {
    // a round takes the rows not touched since it started: let s1's clock pass the first attempt's millisecond
    CLOCK.advance(Duration.ofSeconds(1));

    JsonNode answer = json(request("POST", "/deliveries/retry-peer/" + deadServer));

    assertThat(answer.path("serverLogin").asText()).isEqualTo(deadServer);
    assertThat(answer.path("claimed").asInt()).isEqualTo(1);
    Eventually.until("the extra attempt is counted", 10_000, () -> Scrape.of(s1).count(
        "shine_delivery_attempts_total", "attempt", "extra", "outcome", "not_delivered") >= 1);
    JsonNode accepted = rows("accepted").stream().filter(r -> (r.path("baseKey").asText() + "|2")
        .equals(acceptedKey)).findFirst().orElseThrow();
    assertThat(accepted.path("attempts").asInt()).isEqualTo(1);
    assertThat(accepted.path("nextAttemptAtMs").asLong()).isBetween(acceptedAtMs + 29_000, acceptedAtMs + 31_000);
    assertThat(json(request("POST", "/deliveries/retry-peer/s2")).path("claimed").asInt()).isZero();
    HttpResponse<String> unknown = request("POST", "/deliveries/retry-peer/nowhere");
    assertThat(unknown.statusCode()).isEqualTo(404);
    assertThat(json(unknown).path("error").path("code").asText()).isEqualTo("UNKNOWN_SERVER");
  }

  @Test
  @DisplayName("users: card, routes, live sessions and unsynced outbox items per sibling; unknown user 404")
  void users() {
    JsonNode alice = get("/users/alice");
    assertThat(alice.path("card").path("login").asText()).isEqualTo("alice");
    assertThat(alice.path("routes")).hasSize(1);
    assertThat(alice.path("servedHere").asBoolean()).isTrue();
    assertThat(alice.path("sessions").asInt()).isEqualTo(1);
    assertThat(alice.path("unsyncedBySibling").size()).isZero();

    JsonNode frank = get("/users/frank");
    assertThat(frank.path("routes").get(1).path("serverLogin").asText()).isEqualTo(deadServer);
    assertThat(frank.path("sessions").asInt()).isZero();
    assertThat(frank.path("unsyncedBySibling").path(deadServer).asLong()).isGreaterThanOrEqualTo(1);

    HttpResponse<String> nobody = request("GET", "/users/nobody");
    assertThat(nobody.statusCode()).isEqualTo(404);
    assertThat(json(nobody).path("error").path("code").asText()).isEqualTo("USER_NOT_FOUND");
    assertThat(request("GET", "/users/Not%20A%20Login").statusCode()).isEqualTo(400);
  }

  @Test
  @DisplayName("the admin subcommand prints tables by default and the API's JSON with --json")
  void adminCommand() throws Exception {
    Output peers = admin("--url", base(), "peers");
    assertThat(peers.code).isZero();
    assertThat(peers.out).contains("PEER", "STATE", "LAST ERROR").containsPattern("(?m)^s2 +" + s2.url())
        .containsPattern("(?m)^" + java.util.regex.Pattern.quote(deadServer) + " .* down ");

    Output deliveries = admin("--url", base(), "deliveries", "--state", "failed");
    assertThat(deliveries.code).isZero();
    assertThat(deliveries.out).contains("FROM", "NEXT DUE").containsPattern("(?m)^alice +carol +failed +5 ")
        .contains("1 failed deliveries");

    Output user = admin("--json", "--url", base(), "user", "frank");
    assertThat(user.code).isZero();
    assertThat(Json.MAPPER.readTree(user.out).path("unsyncedBySibling").path(deadServer).asLong()).isPositive();
  }

  @Test
  @DisplayName("the admin subcommand says in one line when the API answers an error or cannot be reached, with the"
      + " exit codes of README: 5 for an unknown user, 3 for an API it cannot reach")
  void adminCommandErrors() {
    Output unknown = admin("--url", base(), "user", "nobody");
    assertThat(unknown.code).isEqualTo(CliFailure.NOT_FOUND);
    assertThat(unknown.err.strip()).isEqualTo("error: 404 USER_NOT_FOUND: unknown user nobody");

    Output down = admin("--url", "http://127.0.0.1:" + TestServer.freePort(), "peers");
    assertThat(down.code).isEqualTo(CliFailure.UNREACHABLE);
    assertThat(down.err).startsWith("error: cannot reach the admin API at").doesNotContain("Exception");

    assertThat(admin("peers").code).isEqualTo(CommandLine.ExitCode.USAGE);
  }

  @Test
  @DisplayName("the admin listener must be a loopback address: the API has no login of its own")
  void adminListensOnLoopbackOnly() {
    assertThatThrownBy(() -> ConfigLoader.parse("{\"admin\":{\"host\":\"0.0.0.0\",\"port\":7190}}", Map.of()))
        .isInstanceOf(ConfigException.class).hasMessageContaining("admin.host must be a loopback address");
    assertThat(ConfigLoader.parse("{\"admin\":{\"host\":\"::1\",\"port\":7190}}", Map.of()).admin().port())
        .isEqualTo(7190);
  }

  private static JsonNode send(ShineClient session, TestUser from, String to, String text) {
    return session.sendPair(ShineClient.signPair(from.login(), from.key(), to, CLOCK.millis(),
        ShineClient.randomNonce(), 0, text.getBytes(StandardCharsets.UTF_8))).await();
  }

  private static List<JsonNode> rows(String state) {
    List<JsonNode> rows = new ArrayList<>();
    get("/deliveries?state=" + state + "&limit=100").path("deliveries").forEach(rows::add);
    return rows;
  }

  private static JsonNode peer(JsonNode body, String serverLogin) {
    for (JsonNode peer : body.path("peers")) {
      if (peer.path("serverLogin").asText().equals(serverLogin)) {
        return peer;
      }
    }
    throw new AssertionError("no peer " + serverLogin + " in " + body);
  }

  private static String base() {
    return "http://127.0.0.1:" + adminPort;
  }

  private static JsonNode get(String path) {
    HttpResponse<String> response = request("GET", path);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return json(response);
  }

  private static HttpResponse<String> request(String method, String path) {
    try {
      return HTTP.send(HttpRequest.newBuilder(URI.create(base() + "/admin/v1" + path))
          .timeout(Duration.ofSeconds(20)).method(method, HttpRequest.BodyPublishers.noBody()).build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static JsonNode json(HttpResponse<String> response) {
    try {
      return Json.MAPPER.readTree(response.body());
    } catch (Exception e) {
      throw new AssertionError(response.body(), e);
    }
  }

  private static Output admin(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = new CommandLine(new AdminCommand()).setOut(new PrintWriter(out, true))
        .setErr(new PrintWriter(err, true)).execute(args);
    return new Output(code, out.toString(), err.toString());
  }

  private record Output(int code, String out, String err) {
  }
}
