package org.shine.server.peer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.support.Eventually;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/**
 * Attack 1 of issue 16, the signing oracle of v2 server sessions: mallory runs a host named in her card; when s1
 * dials it and logs in, her host relays every login frame to s2 (s1's peer, which shares alice with s1), hoping that
 * s1's signature opens a session "as s1" on s2 — from which DmSyncBatch hands out alice's history and takes ACKs
 * that stop its replication. With v2 that worked (s1 signed the callee name its callee answered). With v3 (PROTOCOL
 * §6a steps 3-5) s1 only signs for the name it dialed, after that server's own hello, binding the URL it dialed:
 * the relayed login is worth nothing on s2.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class SigningOracleIT {
  private static final String FAST_SYNC = "{\"sync\":{\"periodMs\":200},\"delivery\":{\"callTimeoutMs\":2000}}";
  private TestWorld world;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx).config(FAST_SYNC);
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("a host that relays s1's login to s2 gets no session on s2: s1 signs nothing for another name, and"
      + " a login signed for the relay's URL is 401 WRONG_URL there")
  void relayedLoginOpensNoSession(Vertx vertx) {
    TestServer[] servers = world.servers("s1", "s2");
    TestServer s1 = servers[0];
    TestServer s2 = servers[1];
    TestUser alice = world.user("alice", s1, s2);
    world.user("bob", s1);
    world.session(alice, s1).sendText("alice", alice.key(), "bob", "alice's secret").await();
    // GIVEN mallory's host: every login frame s1 sends it goes to s2 as s1's, and s2's answers come back
    StubPeer mallorysHost = world.stub();
    AtomicReference<ShineClient> toS2 = new AtomicReference<>();
    List<JsonNode> s2Answers = new CopyOnWriteArrayList<>();
    mallorysHost.respond("ServerAuthChallenge", (op, payload) -> relay(vertx, toS2, s2, op,
            ((ObjectNode) payload.deepCopy()).put("expectedServerLogin", "s2"), s2Answers))
        .respond("ServerAuthLogin", (op, payload) -> relay(vertx, toS2, s2, op, payload, s2Answers))
        .acceptEverything();
    TestUser mallory = world.user("mallory", List.of(Map.entry("s1", s1.url()),
        Map.entry(mallorysHost.serverLogin(), mallorysHost.url())), s1);

    // WHEN s1 dials her host (she is its sibling there: s1 pulls her sync pages) and logs in
    Eventually.until("s1 has dialed mallory's host twice and got s2's answers through it", 20_000,
        () -> s2Answers.size() >= 2);

    // THEN s1 never signed a login for s2's challenge: no ServerAuthLogin reached her host, none reached s2
    assertThat(mallorysHost.count("ServerAuthLogin")).isZero();
    assertThat(s2Answers).allSatisfy(answer -> assertThat(answer.path("serverLogin").asText()).isEqualTo("s2"));
    // and the connection she holds on s2 is still anonymous: the sync ops refuse it
    Throwable refused = catchRefusal(toS2.get().request("DmSyncBatch", syncRequest("s1")));
    assertThat(refused).isInstanceOfSatisfying(ShineClientException.class, e -> {
      assertThat(e.status()).isEqualTo(401);
      assertThat(e.code()).isEqualTo("NOT_AUTHENTICATED");
    });
    assertThat(mallory.login()).isEqualTo("mallory");
  }

  @Test
  @DisplayName("a login s1 signed for mallory's own URL, replayed on s2 as s1's, is 401 WRONG_URL, and with s2's URL"
      + " put in its place 401 BAD_SIGNATURE")
  void loginSignedForAnotherUrlIsRefused(Vertx vertx) {
    TestServer[] servers = world.servers("s1", "s2");
    TestServer s1 = servers[0];
    TestServer s2 = servers[1];
    // GIVEN mallory's host answers as itself (a valid hello of its own), but with a challenge s2 issued
    StubPeer mallorysHost = world.stub();
    AtomicReference<ShineClient> toS2 = new AtomicReference<>();
    List<JsonNode> s2Answers = new CopyOnWriteArrayList<>();
    List<JsonNode> signedLogins = new CopyOnWriteArrayList<>();
    mallorysHost.respond("ServerAuthChallenge", (op, payload) -> relay(vertx, toS2, s2, op,
            ((ObjectNode) payload.deepCopy()).put("expectedServerLogin", "s2"), s2Answers)
            .map(fromS2 -> {
              // her own hello over s1's nonce and s2's challenge: it verifies with her key, so s1 goes on
              ObjectNode forged = payload.deepCopy();
              forged.put("expectedServerLogin", mallorysHost.serverLogin());
              return mallorysHost.hello(forged, fromS2.path("challengeB64").asText());
            }))
        .respond("ServerAuthLogin", (op, payload) -> {
          signedLogins.add(payload);
          return Json.MAPPER.createObjectNode().put("serverLogin", payload.path("serverLogin").asText());
        })
        .acceptEverything();
    world.user("mallory", List.of(Map.entry("s1", s1.url()),
        Map.entry(mallorysHost.serverLogin(), mallorysHost.url())), s1);

    // WHEN s1 logs in to her host, signing for her name and her URL with s2's challenge
    Eventually.until("s1 signed a login for mallory's host", 20_000, () -> !signedLogins.isEmpty());
    JsonNode signed = signedLogins.get(0);
    assertThat(signed.path("url").asText()).isEqualTo(mallorysHost.url());

    // THEN replayed on s2 (whose challenge it answers) it opens nothing
    Throwable wrongUrl = catchRefusal(toS2.get().request("ServerAuthLogin", signed.deepCopy()));
    assertThat(wrongUrl).isInstanceOfSatisfying(ShineClientException.class, e -> {
      assertThat(e.status()).isEqualTo(401);
      assertThat(e.code()).isEqualTo("WRONG_URL");
    });
    // the challenge was single-use: ask for another, then put s2's own URL in the signed login
    JsonNode again = toS2.get().request("ServerAuthChallenge", ShineClient.object().put("serverLogin", "s1")
        .put("expectedServerLogin", "s2").put("nonceB64", Base64.getEncoder().encodeToString(new byte[32])))
        .await();
    assertThat(again.path("challengeB64").asText()).isNotEmpty();
    Throwable badSignature = catchRefusal(toS2.get().request("ServerAuthLogin",
        ((ObjectNode) signed.deepCopy()).put("url", s2.url())));
    assertThat(badSignature).isInstanceOfSatisfying(ShineClientException.class, e -> {
      assertThat(e.status()).isEqualTo(401);
      assertThat(e.code()).isEqualTo("BAD_SIGNATURE");
    });
    Throwable stillAnonymous = catchRefusal(toS2.get().request("DmSyncBatch", syncRequest("s1")));
    assertThat(stillAnonymous).isInstanceOfSatisfying(ShineClientException.class,
        e -> assertThat(e.status()).isEqualTo(401));
  }

  /** Sends {@code op} with {@code payload} to s2 on mallory's one connection there; answers s2's payload. */
  private Future<JsonNode> relay(Vertx vertx, AtomicReference<ShineClient> toS2, TestServer s2, String op,
      JsonNode payload, List<JsonNode> answers) {
    Future<ShineClient> connection = toS2.get() != null ? Future.succeededFuture(toS2.get())
        : ShineClient.connect(vertx, s2.url()).onSuccess(client -> {
          toS2.set(client);
          world.keep(client);
        });
    return connection.compose(client -> client.request(op, payload)).onSuccess(answers::add);
  }

  private static Throwable catchRefusal(Future<JsonNode> call) {
    try {
      call.await(20, TimeUnit.SECONDS);
      return null;
    } catch (Exception e) {
      return e;
    }
  }

  private static ObjectNode syncRequest(String puller) {
    ObjectNode payload = ShineClient.object().put("sourceServerLogin", puller).put("limit", 100);
    payload.putArray("ackSyncIds");
    return payload;
  }
}
