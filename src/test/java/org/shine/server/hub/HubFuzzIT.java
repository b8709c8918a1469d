package org.shine.server.hub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shine.server.support.FuzzServer.abbreviate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.support.FuzzJson;
import org.shine.server.support.FuzzServer;
import org.shine.server.support.FuzzTries;
import org.shine.server.support.TestUser;
import org.shine.server.util.Json;

/**
 * Property-based tests of the hub's HTTP inputs (PROTOCOL §10, HubRoutes) on one real server: challenge queries,
 * token and refresh bodies (valid ones mutated), Bearer tokens, poll parameters and ACK ids, odd text everywhere.
 * Every request is answered below 500, a refused one adds no row, and the hub still serves a valid poll afterwards.
 */
@AddLifecycleHook(FuzzTries.class)
class HubFuzzIT {
  private static FuzzServer fuzz;
  private static HubHttp hub;
  private static TestUser bob;
  /** A valid access token of bob's (refreshed when a fuzzed refresh succeeded and so revoked nothing). */
  private static String accessToken;

  /** The hub endpoints with a body. */
  enum BodyRoute { TOKEN, REFRESH }

  @BeforeContainer
  static void start() throws Exception {
    fuzz = FuzzServer.start("{\"hub\": {\"maxWaitS\": 0}}");
    hub = new HubHttp(fuzz.server);
    bob = TestUser.create("bob").registerOn(fuzz.vertx, fuzz.server);
    accessToken = hub.tokens(bob).get("accessToken").asText();
  }

  @AfterContainer
  static void stop() {
    fuzz.close();
  }

  @Property(tries = 300)
  @Label("token and refresh bodies, valid ones mutated: answered below 500, no row added unless 200")
  void mutatedBodies(@ForAll BodyRoute route, @ForAll("mutations") List<FuzzJson.Mutation> mutations)
      throws Exception {
    JsonNode valid = switch (route) {
      case TOKEN -> tokenBody();
      case REFRESH -> Json.MAPPER.createObjectNode().put("refreshToken", hub.tokens(bob).get("refreshToken").asText());
    };
    String body = FuzzJson.text(FuzzJson.mutate(valid, mutations));
    String path = route == BodyRoute.TOKEN ? "/token" : "/token/refresh";
    assertSurvives(() -> hub.post(path, null, body), "POST " + path + " " + body);
  }

  @Property(tries = 300)
  @Label("any text as a body of any hub route, with any content type: answered below 500")
  void anyBodies(@ForAll("paths") String path, @ForAll("bodies") String body, @ForAll("contentTypes") String type) {
    assertSurvives(() -> hub.send(hub.request(path, accessToken).header("content-type", type)
        .POST(HttpRequest.BodyPublishers.ofString(body)).build()), "POST " + path + " " + body);
  }

  @Property(tries = 300)
  @Label("odd challenge logins, poll waits, ACK ids and Bearer tokens: answered below 500, no row added unless 200")
  void oddParameters(@ForAll("oddText") String value, @ForAll("parameterTargets") String target) {
    String encoded = URLEncoder.encode(value, StandardCharsets.UTF_8);
    // beyond these the HTTP layer refuses the request line or headers itself (414, 431, or GOAWAY on HTTP/2)
    Assume.that(encoded.length() < 3_000 && value.length() < 6_000);
    Request request = switch (target) {
      case "login" -> () -> hub.get("/challenge?login=" + encoded, null);
      case "logins" -> () -> hub.get("/challenge?login=bob&login=" + encoded + "&extra=" + encoded, null);
      case "waitS" -> () -> hub.get("/messages?waitS=" + encoded, accessToken);
      case "ack" -> () -> hub.post("/ack/" + encoded, accessToken, "");
      case "bearer" -> () -> hub.get("/messages?waitS=0", value);
      default -> () -> hub.send(hub.request("/messages?waitS=0", null).header("Authorization", value).GET()
          .build());
    };
    assertSurvives(request, target + " = " + value);
  }

  /** One HTTP request of a try. */
  @FunctionalInterface
  interface Request {
    HttpResponse<String> send() throws Exception;
  }

  private static void assertSurvives(Request request, String what) {
    Map<String, Long> before = fuzz.rows();
    HttpResponse<String> response;
    try {
      response = request.send();
    } catch (IllegalArgumentException e) {
      // the client refuses to send it (a header value or URI no HTTP request may carry): nothing to fuzz
      Assume.that(false);
      return;
    } catch (Exception e) {
      throw new AssertionError("no answer to " + abbreviate(what), e);
    }
    int status = response.statusCode();
    Statistics.label("answers").collect(status + " " + errorCode(response));
    assertThat(status).as("status of %s -> %s", abbreviate(what), abbreviate(response.body())).isBetween(200, 499);
    // 414 and 431 come from the HTTP layer itself (a request line or headers over its limits), without a body
    if (status >= 400 && status != 414 && status != 431) {
      assertThat(errorCode(response)).as("error code of %s -> %s", abbreviate(what), response.body())
          .matches("[A-Z][A-Z0-9_]*");
    }
    if (status != 200) {
      Map<String, Long> after = fuzz.rows();
      before.forEach((table, count) -> assertThat(after.get(table)).as("rows of %s after %s -> %s", table,
          abbreviate(what), abbreviate(response.body())).isLessThanOrEqualTo(count));
    }
    assertStillPolls();
    fuzz.assertNoErrorLogged(what);
  }

  /** A valid short poll: the hub answers bob (204, or 200 when an event is queued) with the current token. */
  private static void assertStillPolls() {
    try {
      HttpResponse<String> poll = hub.get("/messages?waitS=0", accessToken);
      if (poll.statusCode() == 401) {
        // a fuzzed refresh of an old token revoked the family (PROTOCOL §10): log in again
        accessToken = hub.tokens(bob).get("accessToken").asText();
        poll = hub.get("/messages?waitS=0", accessToken);
      }
      assertThat(poll.statusCode()).as("a valid poll afterwards: %s", poll.body()).isIn(200, 204);
    } catch (Exception e) {
      throw new AssertionError("no answer to a valid poll", e);
    }
  }

  private static String errorCode(HttpResponse<String> response) {
    try {
      return response.body().isEmpty() ? "" : Json.MAPPER.readTree(response.body()).at("/error/code").asText();
    } catch (Exception e) {
      return "(not JSON)";
    }
  }

  private static ObjectNode tokenBody() throws Exception {
    String challengeB64 = hub.challenge(bob);
    byte[] signature = Ed25519Signer.sign(bob.key().privateKey(),
        ("SHiNE_HUB|" + fuzz.server.serverLogin() + "|" + challengeB64).getBytes(StandardCharsets.UTF_8));
    return Json.MAPPER.createObjectNode().put("login", "bob").put("challengeB64", challengeB64)
        .put("signatureB64", Base64.getEncoder().encodeToString(signature));
  }

  @Provide
  Arbitrary<List<FuzzJson.Mutation>> mutations() {
    return FuzzJson.mutations();
  }

  @Provide
  Arbitrary<String> paths() {
    return Arbitraries.of("/token", "/token/refresh", "/ack/1", "/ack/-1", "/ack/99999999999999999999", "/messages",
        "/challenge", "/nothing", "/ack/", "/token/", "/ack/1/2");
  }

  @Provide
  Arbitrary<String> bodies() {
    return Arbitraries.frequencyOf(
        Tuple.of(3, FuzzJson.oddValue().map(FuzzJson::text)),
        Tuple.of(2, FuzzJson.oddString().map(s -> s.length() > 20_000 ? s.substring(0, 20_000) : s)),
        Tuple.of(1, Arbitraries.of("{", "{}", "[]", "null", "{\"login\":\"bob\"}", "{\"refreshToken\":null}",
            "{\"refreshToken\":\"\\ud800\"}", "{\"login\":\"bob\",\"challengeB64\":\"\\u0000\",\"signatureB64\":\""
                + "A".repeat(86) + "==\"}", "{\"refreshToken\":\"a\\u0000b\"}")));
  }

  @Provide
  Arbitrary<String> contentTypes() {
    return Arbitraries.of("application/json", "text/plain", "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x", "application/json; charset=latin1", "");
  }

  @Provide
  Arbitrary<String> oddText() {
    return Arbitraries.oneOf(FuzzJson.oddString().map(s -> s.length() > 2_000 ? s.substring(0, 2_000) : s),
        Arbitraries.of("0", "-0", "1", "-1", "30", "31", "9223372036854775807", "9223372036854775808",
            "-9223372036854775809", "1e3", "0x10", " 1", "1 ", "NaN", "Bearer ", "Bearer", "bearer x",
            "Bearer \u0000", "Bearer " + "A".repeat(10_000)));
  }

  @Provide
  Arbitrary<String> parameterTargets() {
    return Arbitraries.of("login", "logins", "waitS", "ack", "bearer", "authorization");
  }
}
