package org.shine.server.hub;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
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
import org.shine.server.support.MutableClock;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/**
 * Token refresh with its grace window and the bound on open challenges (PROTOCOL §10 v2, §11), against a real
 * server whose clock the tests move.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class HubTokensIT {
  private static final int GRACE_S = 30;
  private static final int CHALLENGES = 3;
  private static final MutableClock CLOCK = MutableClock.now();
  private static TestWorld world;
  private static Vertx vertx;
  private static Pool sql;
  private static TestServer server;
  private static HubHttp hub;

  @BeforeAll
  static void start() {
    world = TestWorld.on(Vertx.vertx()).clock(CLOCK);
    vertx = world.vertx();
    server = world.server("s1", "{\"hub\":{\"refreshGraceS\":" + GRACE_S + ",\"challengesPerLogin\":" + CHALLENGES
        + "}}");
    sql = world.sql(server).pool();
    hub = new HubHttp(server);
  }

  @AfterAll
  static void stop() {
    world.close();
    vertx.close().await();
  }

  @Test
  @DisplayName("a refresh whose answer was lost is recoverable: the same old token again gets the same pair, and"
      + " both new tokens work")
  void lostRefreshAnswer() throws Exception {
    JsonNode first = hub.tokens(user("bob"));
    String oldRefresh = first.get("refreshToken").asText();

    // GIVEN a refresh whose answer the client never got
    JsonNode lost = HubHttp.ok(hub.refresh(oldRefresh));
    CLOCK.advance(Duration.ofSeconds(10));

    // WHEN the client retries with the refresh token it still has
    JsonNode retried = HubHttp.ok(hub.refresh(oldRefresh));

    // THEN it gets that same pair, with the access token's remaining life, and the pair works
    assertThat(retried.get("accessToken").asText()).isEqualTo(lost.get("accessToken").asText());
    assertThat(retried.get("refreshToken").asText()).isEqualTo(lost.get("refreshToken").asText());
    assertThat(lost.get("expiresInS").asLong()).isEqualTo(900);
    assertThat(retried.get("expiresInS").asLong()).isEqualTo(890);
    assertThat(hub.get("/messages?waitS=0", retried.get("accessToken").asText()).statusCode()).isEqualTo(204);
    JsonNode next = HubHttp.ok(hub.refresh(retried.get("refreshToken").asText()));
    assertThat(next.get("refreshToken").asText()).isNotEqualTo(retried.get("refreshToken").asText());
    assertThat(hub.get("/messages?waitS=0", next.get("accessToken").asText()).statusCode()).isEqualTo(204);
    assertThat(storedUnderHashes(retried)).as("the retry stored nothing new").isEqualTo(2);
  }

  @Test
  @DisplayName("the same old refresh token after the grace window revokes the family, the new access token too")
  void reuseAfterTheGrace() throws Exception {
    JsonNode first = hub.tokens(user("bob"));
    String oldRefresh = first.get("refreshToken").asText();
    JsonNode rotated = HubHttp.ok(hub.refresh(oldRefresh));
    CLOCK.advance(Duration.ofSeconds(GRACE_S - 1));
    assertThat(HubHttp.ok(hub.refresh(oldRefresh)).get("accessToken").asText())
        .as("still within the grace").isEqualTo(rotated.get("accessToken").asText());

    CLOCK.advance(Duration.ofSeconds(2));
    HttpResponse<String> late = hub.refresh(oldRefresh);

    assertThat(late.statusCode()).isEqualTo(401);
    assertThat(Json.MAPPER.readTree(late.body()).at("/error/code").asText()).isEqualTo("INVALID_TOKEN");
    assertThat(hub.get("/messages?waitS=0", rotated.get("accessToken").asText()).statusCode()).isEqualTo(401);
    assertThat(hub.refresh(rotated.get("refreshToken").asText()).statusCode()).isEqualTo(401);
  }

  @Test
  @DisplayName("a retry after the new refresh token was already used is no lost answer: it revokes the family")
  void retryAfterTheSuccessorWasUsed() throws Exception {
    JsonNode first = hub.tokens(user("bob"));
    String oldRefresh = first.get("refreshToken").asText();
    JsonNode rotated = HubHttp.ok(hub.refresh(oldRefresh));
    assertThat(HubHttp.ok(hub.refresh(oldRefresh)).get("refreshToken").asText())
        .isEqualTo(rotated.get("refreshToken").asText());
    // the pair evidently arrived: its refresh token has been used
    JsonNode next = HubHttp.ok(hub.refresh(rotated.get("refreshToken").asText()));

    HttpResponse<String> retry = hub.refresh(oldRefresh);

    assertThat(retry.statusCode()).isEqualTo(401);
    assertThat(hub.get("/messages?waitS=0", next.get("accessToken").asText()).statusCode()).isEqualTo(401);
    assertThat(hub.get("/messages?waitS=0", rotated.get("accessToken").asText()).statusCode()).isEqualTo(401);
    assertThat(hub.refresh(next.get("refreshToken").asText()).statusCode()).isEqualTo(401);
  }

  @Test
  @DisplayName("two presentations of one refresh token at once, on two connections, get the same pair")
  void concurrentRefresh() throws Exception {
    String oldRefresh = hub.tokens(user("bob")).get("refreshToken").asText();
    HttpRequest refresh = hub.request("/token/refresh", null).header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(Json.MAPPER.createObjectNode().put("refreshToken", oldRefresh)
            .toString())).build();

    CompletableFuture<HttpResponse<String>> one = hub.onOwnConnection(refresh);
    CompletableFuture<HttpResponse<String>> other = hub.onOwnConnection(refresh);

    JsonNode first = HubHttp.ok(one.get(20, TimeUnit.SECONDS));
    JsonNode second = HubHttp.ok(other.get(20, TimeUnit.SECONDS));
    assertThat(second.get("accessToken").asText()).isEqualTo(first.get("accessToken").asText());
    assertThat(second.get("refreshToken").asText()).isEqualTo(first.get("refreshToken").asText());
    assertThat(hub.get("/messages?waitS=0", first.get("accessToken").asText()).statusCode()).isEqualTo(204);
  }

  @Test
  @DisplayName("beyond challengesPerLogin open challenges only the newest stay: the oldest yields no token, the"
      + " newest does; an expired one never does")
  void challengeBound() throws Exception {
    TestUser bob = user("bob");
    List<String> issued = new ArrayList<>();
    for (int i = 0; i < CHALLENGES + 2; i++) {
      issued.add(hub.challenge(bob));
    }

    assertThat(openChallenges(bob)).containsExactlyInAnyOrderElementsOf(issued.subList(2, issued.size()));
    assertThat(hub.token(bob, issued.get(0)).statusCode()).isEqualTo(401);
    assertThat(hub.token(bob, issued.get(issued.size() - 1)).statusCode()).isEqualTo(200);

    String expiring = hub.challenge(bob);
    CLOCK.advance(Duration.ofMinutes(3));
    assertThat(hub.token(bob, expiring).statusCode()).isEqualTo(401);
  }

  /** Found by HubFuzzIT: the body handler's 413 came as plain text, and the router logged each one at ERROR. */
  @Test
  @DisplayName("a body over 16 KiB is 413 BODY_TOO_LARGE, answered as JSON like every hub error")
  void bodyTooLarge() throws Exception {
    String body = "{\"refreshToken\":\"" + "a".repeat(16 * 1024) + "\"}";

    HttpResponse<String> response = hub.post("/token/refresh", null, body);

    assertThat(response.statusCode()).isEqualTo(413);
    assertThat(response.headers().firstValue("content-type")).hasValue("application/json");
    assertThat(Json.MAPPER.readTree(response.body()).at("/error/code").asText()).isEqualTo("BODY_TOO_LARGE");
    assertThat(hub.get("/messages?waitS=0", hub.tokens(user("big")).get("accessToken").asText()).statusCode())
        .isEqualTo(204);
  }

  /** Found by HubFuzzIT: a form body with a field longer than the form decoder takes was answered 500. */
  @Test
  @DisplayName("a body sent as a form is 400 BAD_JSON, whatever the form decoder makes of it")
  void formBodies() throws Exception {
    for (String type : List.of("application/x-www-form-urlencoded", "multipart/form-data; boundary=x")) {
      HttpResponse<String> response = hub.send(hub.request("/token", null).header("content-type", type)
          .POST(HttpRequest.BodyPublishers.ofString("refreshToken=" + "a".repeat(10_000))).build());

      assertThat(response.statusCode()).as("%s -> %s", type, response.body()).isEqualTo(400);
      assertThat(Json.MAPPER.readTree(response.body()).at("/error/code").asText()).isEqualTo("BAD_JSON");
    }
  }

  /** Found by HubFuzzIT: a challengeB64 holding U+0000 reached the database and was answered 500. */
  @Test
  @DisplayName("a token request whose challengeB64 is not what a challenge can be is 400 and leaves the open ones")
  void challengeThatCannotBe() throws Exception {
    TestUser user = user("nul");
    String challenge = hub.challenge(user);
    String signature = Base64.getEncoder().encodeToString(new byte[64]);

    for (String bad : List.of("\u0000", "a\u0000b", "", challenge.substring(4), "@@@@" + challenge.substring(4))) {
      HttpResponse<String> response = hub.post("/token", null, Json.MAPPER.createObjectNode().put("login",
          user.login()).put("challengeB64", bad).put("signatureB64", signature).toString());
      assertThat(response.statusCode()).as("%s -> %s", bad, response.body()).isEqualTo(400);
      assertThat(Json.MAPPER.readTree(response.body()).at("/error/code").asText()).isIn("BAD_BASE64",
          "INVALID_FIELD");
    }

    assertThat(openChallenges(user)).containsExactly(challenge);
    assertThat(hub.token(user, challenge).statusCode()).isEqualTo(200);
  }

  private static TestUser user(String prefix) {
    return world.user(TestWorld.unique(prefix), server);
  }

  private static List<String> openChallenges(TestUser user) {
    List<String> open = new ArrayList<>();
    for (Row row : sql.preparedQuery("SELECT challenge_b64 FROM hub_challenge WHERE login = $1")
        .execute(Tuple.of(user.login())).await()) {
      open.add(row.getString(0));
    }
    return open;
  }

  /** Rows stored under the hashes of the pair's two tokens. */
  private static long storedUnderHashes(JsonNode pair) throws NoSuchAlgorithmException {
    return sql.preparedQuery("SELECT count(*) FROM hub_token WHERE token_hash IN ($1, $2)")
        .execute(Tuple.of(Buffer.buffer(sha256(pair.get("accessToken").asText())),
            Buffer.buffer(sha256(pair.get("refreshToken").asText()))))
        .await().iterator().next().getLong(0);
  }

  private static byte[] sha256(String token) throws NoSuchAlgorithmException {
    return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
  }
}
