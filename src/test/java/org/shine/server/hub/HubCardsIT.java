package org.shine.server.hub;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.support.MutableClock;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/** {@code GET /hub/v1/cards/{login}}: the cards a polling adapter verifies its events with (PROTOCOL §4 v3). */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class HubCardsIT {
  /** The servers' clock: it moves only when a test moves it, so a rate's window refills only then. */
  private final MutableClock clock = MutableClock.now();
  private TestWorld world;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx).clock(clock);
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("with an access token: 200 and the stored card (as GetUserCard serves it); 404 USER_NOT_FOUND for an"
      + " unknown login, 400 for a malformed one; 401 INVALID_TOKEN without a token or with an unknown one")
  void cards() throws Exception {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    TestUser bob = world.user("bob", s1);
    HubHttp hub = new HubHttp(s1);
    String token = hub.tokens(bob).get("accessToken").asText();

    HttpResponse<String> found = hub.get("/cards/alice", token);
    assertThat(found.statusCode()).isEqualTo(200);
    assertThat(found.headers().firstValue("content-type")).hasValue("application/json");
    JsonNode served = world.anonymous(s1).request("GetUserCard", ShineClient.object().put("login", alice.login()))
        .await().get("card");
    assertThat(Json.MAPPER.readTree(found.body()).get("card")).isEqualTo(served);
    assertThat(served.get("publicKeyB64").asText()).isEqualTo(alice.key().publicKeyB64());

    HttpResponse<String> unknown = hub.get("/cards/nobody", token);
    assertThat(unknown.statusCode()).isEqualTo(404);
    assertThat(Json.MAPPER.readTree(unknown.body()).at("/error/code").asText()).isEqualTo("USER_NOT_FOUND");
    assertThat(hub.get("/cards/Not%20A%20Login", token).statusCode()).isEqualTo(400);

    for (String wrong : new String[] {null, "not-a-token"}) {
      HttpResponse<String> refused = hub.get("/cards/alice", wrong);
      assertThat(refused.statusCode()).isEqualTo(401);
      assertThat(Json.MAPPER.readTree(refused.body()).at("/error/code").asText()).isEqualTo("INVALID_TOKEN");
    }
    // the refresh token is not an access token
    assertThat(hub.get("/cards/alice", hub.tokens(bob).get("refreshToken").asText()).statusCode()).isEqualTo(401);
    assertThat(hub.post("/cards/alice", token, "{}").statusCode()).as("read only").isEqualTo(405);
  }

  @Test
  @DisplayName("card reads are limited per user on a node: a burst beyond the rate is 429 RATE_LIMITED, another"
      + " user's reads go on, and the user reads again once the second has passed")
  void cardReadsRateLimited() throws Exception {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    TestUser bob = world.user("bob", s1);
    HubHttp hub = new HubHttp(s1);
    String bobs = hub.tokens(bob).get("accessToken").asText();
    String alices = hub.tokens(alice).get("accessToken").asText();

    // WHEN bob reads cards in a burst well past the rate (the clock stands still: no refill)
    List<CompletableFuture<HttpResponse<String>>> burst = new ArrayList<>();
    for (int i = 0; i < 3 * HubService.CARD_READS_PER_USER_PER_S; i++) {
      burst.add(hub.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s1.port()
          + "/hub/v1/cards/alice")).header("Authorization", "Bearer " + bobs).GET().build()));
    }
    List<HttpResponse<String>> answers = new ArrayList<>();
    for (CompletableFuture<HttpResponse<String>> answer : burst) {
      answers.add(answer.get(30, TimeUnit.SECONDS));
    }

    // THEN the reads beyond the rate are refused with the JSON error, the others served
    assertThat(answers).allMatch(r -> r.statusCode() == 200 || r.statusCode() == 429);
    assertThat(answers).filteredOn(r -> r.statusCode() == 200).hasSize(HubService.CARD_READS_PER_USER_PER_S);
    HttpResponse<String> refused = answers.stream().filter(r -> r.statusCode() == 429).findFirst().orElseThrow();
    assertThat(Json.MAPPER.readTree(refused.body()).at("/error/code").asText()).isEqualTo("RATE_LIMITED");
    assertThat(hub.get("/cards/bob", alices).statusCode()).as("another user's reads").isEqualTo(200);
    clock.advance(java.time.Duration.ofSeconds(1));
    assertThat(status(hub, "/cards/alice", bobs)).as("a second later").isEqualTo(200);
  }

  private static int status(HubHttp hub, String path, String token) {
    try {
      return hub.get(path, token).statusCode();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
