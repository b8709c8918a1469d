package org.shine.server.hub;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.bus.Addresses;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.support.Eventually;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/** The hub's HTTP API against a real server (PROTOCOL §10, the server side of seed 004). */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class HubIT {
  private static TestWorld world;
  private static TestServer server;
  private static HubHttp hub;

  @BeforeAll
  static void start() {
    world = TestWorld.on(Vertx.vertx());
    server = world.server("s1", "{\"hub\":{\"visibilityTimeoutS\":1,\"maxWaitS\":5},\"instances\":{\"gateway\":2}}");
    hub = new HubHttp(server);
  }

  @AfterAll
  static void stop() {
    world.close();
    world.vertx().close().await();
  }

  @Test
  @DisplayName("token by challenge; 204 when empty; an event is handed out with its delivery id; ACK is idempotent")
  void pollAndAck() throws Exception {
    TestUser bob = user("bob");
    TestUser alice = user("alice");
    JsonNode tokens = hub.tokens(bob);
    String access = tokens.get("accessToken").asText();
    assertThat(tokens.get("expiresInS").asLong()).isEqualTo(900);

    assertThat(hub.get("/messages?waitS=0", access).statusCode()).isEqualTo(204);
    JsonNode sent = send(alice, bob, "via the hub");
    // the hub copy of an event is queued after the send's commit: a long poll waits for it
    HttpResponse<String> got = hub.get("/messages?waitS=5", access);

    assertThat(got.statusCode()).isEqualTo(200);
    String deliveryId = got.headers().firstValue("X-Delivery-Id").orElseThrow();
    JsonNode event = Json.MAPPER.readTree(got.body());
    assertThat(event.get("op").asText()).isEqualTo("IncomingDirectMessage");
    assertThat(event.at("/payload/baseKey").asText()).isEqualTo(sent.get("baseKey").asText());
    assertThat(event.get("eventKey").asText()).isNotBlank();
    assertThat(hub.post("/ack/" + deliveryId, access, "").statusCode()).isEqualTo(200);
    assertThat(hub.post("/ack/" + deliveryId, access, "").statusCode()).isEqualTo(200);
    assertThat(hub.post("/ack/999999999", access, "").statusCode()).isEqualTo(404);
    assertThat(hub.get("/messages?waitS=0", access).statusCode()).isEqualTo(204);
  }

  @Test
  @DisplayName("a long poll wakes when an event arrives, and ends with 408 when none does")
  void longPoll() throws Exception {
    TestUser bob = user("bob");
    TestUser alice = user("alice");
    String access = hub.tokens(bob).get("accessToken").asText();

    assertThat(hub.get("/messages?waitS=1", access).statusCode()).isEqualTo(408);
    CompletableFuture<HttpResponse<String>> waiting = hub.sendAsync(hub.request("/messages?waitS=5", access).GET()
        .build());
    Eventually.until("the poll waits for a wake-up", 10_000, () -> waitsForWakeUp(bob));
    long sentAt = System.nanoTime();
    send(alice, bob, "wake up");
    HttpResponse<String> woke = waiting.get(10, TimeUnit.SECONDS);

    assertThat(woke.statusCode()).isEqualTo(200);
    assertThat(Duration.ofNanos(System.nanoTime() - sentAt)).isLessThan(Duration.ofSeconds(4));
  }

  @Test
  @DisplayName("an event not ACKed within the visibility timeout is handed out again with the same id, in order")
  void redelivery() throws Exception {
    TestUser bob = user("bob");
    TestUser alice = user("alice");
    String access = hub.tokens(bob).get("accessToken").asText();
    send(alice, bob, "first");
    send(alice, bob, "second");

    HttpResponse<String> first = hub.get("/messages?waitS=5", access);
    HttpResponse<String> whileHidden = hub.get("/messages?waitS=0", access);
    // a waiting poll looks again when the visibility timeout of the event in flight ends: it gets the event then
    HttpResponse<String> again = hub.get("/messages?waitS=5", access);

    String id = first.headers().firstValue("X-Delivery-Id").orElseThrow();
    assertThat(whileHidden.statusCode()).isEqualTo(204);
    assertThat(again.statusCode()).isEqualTo(200);
    assertThat(again.headers().firstValue("X-Delivery-Id")).contains(id);
    assertThat(hub.post("/ack/" + id, access, "").statusCode()).isEqualTo(200);
    HttpResponse<String> second = hub.get("/messages?waitS=0", access);
    assertThat(Long.parseLong(second.headers().firstValue("X-Delivery-Id").orElseThrow()))
        .isGreaterThan(Long.parseLong(id));
  }

  @Test
  @DisplayName("bad input: no or unknown token 401, bad waitS 400, bad JSON 400, wrong method 405, bad signature 401")
  void badInput() throws Exception {
    TestUser bob = user("bob");
    String access = hub.tokens(bob).get("accessToken").asText();

    assertThat(hub.get("/messages?waitS=0", null).statusCode()).isEqualTo(401);
    assertThat(hub.get("/messages?waitS=0", "nope").statusCode()).isEqualTo(401);
    assertThat(hub.get("/messages?waitS=abc", access).statusCode()).isEqualTo(400);
    assertThat(hub.post("/token", null, "{not json").statusCode()).isEqualTo(400);
    assertThat(hub.send(hub.request("/messages", access).DELETE().build()).statusCode()).isEqualTo(405);
    JsonNode challenge = Json.MAPPER.readTree(hub.get("/challenge?login=" + bob.login(), null).body());
    byte[] wrong = Ed25519Signer.sign(TestUser.create("eve").key().privateKey(), "x".getBytes(StandardCharsets.UTF_8));
    assertThat(hub.post("/token", null, "{\"login\":\"" + bob.login() + "\",\"challengeB64\":\""
        + challenge.get("challengeB64").asText() + "\",\"signatureB64\":\""
        + Base64.getEncoder().encodeToString(wrong) + "\"}").statusCode()).isEqualTo(401);
    assertThat(hub.get("/challenge?login=nobody-here", null).statusCode()).isEqualTo(404);
  }

  @Test
  @DisplayName("an oversized body is 413")
  void oversizedBody() throws Exception {
    String big = "{\"refreshToken\":\"" + "x".repeat(20_000) + "\"}";
    assertThat(hub.post("/token/refresh", null, big).statusCode()).isEqualTo(413);
  }

  @Test
  @DisplayName("a node holds at most 4 polls of one user over all its gateway instances: the fifth is 429")
  void pollLimitPerNode() throws Exception {
    TestUser bob = user("bob");
    String access = hub.tokens(bob).get("accessToken").asText();

    // WHEN five long polls come at once, each on a connection of its own, so the node spreads them over its
    // two gateway instances (never more than three on one)
    List<CompletableFuture<HttpResponse<String>>> polls = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      polls.add(hub.onOwnConnection(hub.request("/messages?waitS=3", access).GET().build()));
    }

    // THEN the last to arrive is refused and the other four are held until their wait ends empty
    List<Integer> statuses = new ArrayList<>();
    for (CompletableFuture<HttpResponse<String>> poll : polls) {
      statuses.add(poll.get(20, TimeUnit.SECONDS).statusCode());
    }
    assertThat(statuses).containsExactlyInAnyOrder(429, 408, 408, 408, 408);
  }

  @Test
  @DisplayName("a long poll is never held past its access token's expiry")
  void holdEndsWithTheToken() throws Exception {
    try (TestWorld own = world.child()) {
      TestServer shortLived = own.server("s2", "{\"hub\":{\"accessTtlS\":1,\"maxWaitS\":20}}");
      HubHttp shortHub = new HubHttp(shortLived);
      TestUser carol = own.user("carol", shortLived);
      String access = shortHub.tokens(carol).get("accessToken").asText();
      long start = System.nanoTime();
      HttpResponse<String> poll = shortHub.get("/messages?waitS=20", access);
      assertThat(poll.statusCode()).isEqualTo(408);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
      assertThat(shortHub.get("/messages?waitS=0", access).statusCode()).isEqualTo(401);
    }
  }

  private static TestUser user(String prefix) {
    return world.user(TestWorld.unique(prefix), server);
  }

  private static JsonNode send(TestUser from, TestUser to, String text) {
    ShineClient session = from.session(world.vertx(), server);
    try {
      return session.sendText(from.login(), from.key(), to.login(), text).await();
    } finally {
      session.close();
    }
  }

  /**
   * True once a poll of {@code user} waits for a wake-up: its consumer is on the server's bus, so a request there
   * is not refused for want of a handler (the poll takes it for a wake-up, looks and finds nothing).
   */
  private static boolean waitsForWakeUp(TestUser user) {
    Future<Message<Object>> probe = server.vertx().eventBus().request(Addresses.hubWake(user.login()), "probe",
        new DeliveryOptions().setSendTimeout(100));
    probe.otherwiseEmpty().await();
    return !(probe.cause() instanceof ReplyException refused && refused.failureType() == ReplyFailure.NO_HANDLERS);
  }
}
