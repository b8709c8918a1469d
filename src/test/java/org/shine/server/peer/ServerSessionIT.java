package org.shine.server.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.KeyFile;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.support.Eventually;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/**
 * Server identity and server sessions (PROTOCOL §6a) with real servers and stub peers on loopback: the server key
 * and its document, the checks of another server's login (pinned, learnt, fetched, changed keys), and what a
 * refused login leaves working.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class ServerSessionIT {
  private static final String FAST_SYNC = "\"sync\":{\"periodMs\":200},\"delivery\":{\"callTimeoutMs\":1000}";
  private TestWorld world;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx);
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("the server key is created once in the database, served at /.well-known/shine-server, kept across"
      + " restarts and shared by every node of the deployment")
  void serverKeyInTheDatabase(Vertx vertx) throws Exception {
    TestServer first = world.server("s1");
    JsonNode document = wellKnown(first);
    first.close();

    TestServer again = world.server("s1");
    TestServer secondNode = world.node(again, "{}");

    assertThat(document.get("serverLogin").asText()).isEqualTo("s1");
    assertThat(document.get("url").asText()).isEqualTo(again.url());
    assertThat(Base64.getDecoder().decode(document.get("publicKeyB64").asText())).hasSize(32);
    assertThat(wellKnown(again).get("publicKeyB64")).isEqualTo(document.get("publicKeyB64"));
    assertThat(wellKnown(secondNode).get("publicKeyB64")).isEqualTo(document.get("publicKeyB64"));
    byte[] stored = world.sql(again).rows("SELECT public_key FROM server_identity").iterator().next()
        .getBuffer(0).getBytes();
    assertThat(Base64.getEncoder().encodeToString(stored)).isEqualTo(document.get("publicKeyB64").asText());
  }

  @Test
  @DisplayName("serverKeyFile overrides the database's key; a file that is not a key stops the start with a"
      + " clear error")
  void serverKeyFile(Vertx vertx, @TempDir Path dir) throws Exception {
    KeyFile key = KeyFile.generate(null);
    Path file = dir.resolve("server.key");
    key.write(file);
    TestServer server = world.server("s1", "{\"serverKeyFile\":\"" + file + "\"}");

    assertThat(wellKnown(server).get("publicKeyB64").asText()).isEqualTo(key.publicKeyB64());
    assertThatThrownBy(() -> world.node(server, "{\"serverKeyFile\":\"" + dir.resolve("missing.key") + "\"}"))
        .hasMessageContaining("serverKeyFile").hasMessageContaining("missing.key");
  }

  @Test
  @DisplayName("a pinned key admits its server; a login signed with another key is 401, and an unknown server's"
      + " login is 401 UNKNOWN_SERVER")
  void pinnedAndUnknownServers(Vertx vertx) {
    StubPeer s2 = world.stub().named("s2");
    TestServer s1 = world.server("s1", "{\"peers\":[{\"serverLogin\":\"s2\",\"url\":\"" + s2.url()
        + "\",\"publicKeyB64\":\"" + s2.serverKey().publicKeyB64() + "\"}]}");

    JsonNode admitted = s2.sessionOn(vertx, s1.url()).request("DmSyncBatch", syncRequest("s2")).await();
    ShineClient impostor = world.anonymous(s1);
    ShineClient stranger = world.anonymous(s1);

    assertThat(admitted.has("items")).isTrue();
    assertRefused(() -> impostor.serverLogin("s2", KeyFile.generate(null).privateKey()).await(), 401,
        ErrorCode.BAD_SIGNATURE);
    assertRefused(() -> stranger.serverLogin("s7", KeyFile.generate(null).privateKey()).await(), 401,
        ErrorCode.UNKNOWN_SERVER);
    // a refused login leaves the session open and anonymous: the sync ops stay closed to it
    assertRefused(() -> impostor.request("DmSyncBatch", syncRequest("s2")).await(), 401,
        ErrorCode.NOT_AUTHENTICATED);
    assertThat(impostor.request("GetUserCard", ShineClient.object().put("login", "nobody")).otherwiseEmpty()
        .await()).isNull();
  }

  @Test
  @DisplayName("an unpinned key is fetched once from the URL this server knows and remembered; a changed key is"
      + " 403 SERVER_KEY_CHANGED until an operator pins it")
  void learntThenChangedKey(Vertx vertx) {
    StubPeer s5 = world.stub();
    TestServer s1 = world.server("s1");
    TestUser.create("mia").publish(vertx, List.of(Map.entry("s1", s1.url()), Map.entry(s5.serverLogin(), s5.url())),
        1, s1.url());

    s5.sessionOn(vertx, s1.url());
    byte[] learnt = world.sql(s1).rows("SELECT public_key FROM known_server WHERE server_login = $1", s5.serverLogin())
        .iterator().next().getBuffer(0).getBytes();
    s5.rotateKey();

    assertThat(Base64.getEncoder().encodeToString(learnt)).isNotEqualTo(s5.serverKey().publicKeyB64());
    assertRefused(() -> s5.sessionOn(vertx, s1.url()), 403, ErrorCode.SERVER_KEY_CHANGED);
    // WHEN the operator pins the new key THEN it is accepted
    s1.close();
    TestServer pinned = world.server("s1", "{\"peers\":[{\"serverLogin\":\"" + s5.serverLogin() + "\",\"url\":\"" + s5.url()
        + "\",\"publicKeyB64\":\"" + s5.serverKey().publicKeyB64() + "\"}]}");
    assertThat(s5.sessionOn(vertx, pinned.url())).isNotNull();
  }

  @Test
  @DisplayName("a key document that names another serverLogin, or none at the known URL, is 401")
  void documentMustNameTheServer(Vertx vertx) {
    StubPeer liar = world.stub();
    String liarName = liar.serverLogin();
    liar.named("other");
    Map.Entry<String, String> nothingThere = TestWorld.deadRoute();
    TestServer s1 = world.server("s1");
    TestUser.create("noa").publish(vertx, List.of(Map.entry("s1", s1.url()), Map.entry(liarName, liar.url())), 1,
        s1.url());
    TestUser.create("ola").publish(vertx, List.of(Map.entry("s1", s1.url()), nothingThere), 1, s1.url());
    ShineClient claimsLiar = world.anonymous(s1);
    ShineClient claimsNothing = world.anonymous(s1);

    assertRefused(() -> claimsLiar.serverLogin(liarName, liar.serverKey().privateKey()).await(), 401,
        ErrorCode.SERVER_KEY_UNAVAILABLE);
    assertRefused(() -> claimsNothing.serverLogin(nothingThere.getKey(), KeyFile.generate(null).privateKey())
        .await(), 401, ErrorCode.SERVER_KEY_UNAVAILABLE);
  }

  @Test
  @DisplayName("real peers log each other in; a refused login leaves the open ops working, sync waits, and the"
      + " login is retried until it succeeds")
  void refusedLoginThenRetried(Vertx vertx) {
    AtomicBoolean accept = new AtomicBoolean(false);
    StubPeer sibling = world.stub().named("sib")
        .respond("ServerAuthLogin", (op, p) -> accept.get()
            ? Json.MAPPER.createObjectNode().put("serverLogin", p.path("serverLogin").asText())
            : new StubPeer.Error(401, "UNKNOWN_SERVER", "who are you?"))
        .respond("UserSettingsSyncBatch", (op, p) -> Json.MAPPER.createObjectNode().put("hasMore", false)
            .set("items", Json.MAPPER.createArrayNode()))
        .respond("DmSyncBatch", (op, p) -> Json.MAPPER.createObjectNode().put("hasMore", false)
            .set("items", Json.MAPPER.createArrayNode()))
        .respond("ReceiveIncomingMessage", (op, p) -> Json.MAPPER.createObjectNode().put("messageKey", "k"))
        .respond("PublishUserCard", (op, p) -> Json.MAPPER.createObjectNode().put("changed", false));
    TestServer s1 = world.server("s1", "{" + FAST_SYNC + ",\"peers\":[{\"serverLogin\":\"sib\",\"url\":\""
        + sibling.url() + "\"}]}");
    TestUser alice = TestUser.create("alice").publish(vertx, List.of(Map.entry("s1", s1.url()),
        Map.entry("sib", sibling.url())), 1, s1.url());
    TestUser bob = TestUser.create("bob").publish(vertx, List.of(Map.entry("sib", sibling.url())), 1, s1.url());
    Eventually.until("s1 tried to log in to its peer", 10_000, () -> sibling.count("ServerAuthLogin") >= 1);

    // WHEN the peer refuses the login THEN delivery to it (an open op) still works, and no sync page is asked for
    JsonNode sent = world.session(alice, s1).sendText("alice", alice.key(), "bob", "hi").await();
    assertThat(sent.get("deliveryState").asText()).isEqualTo("delivered");
    Eventually.until("the login is tried again", 10_000, () -> sibling.count("ServerAuthLogin") >= 2);
    assertThat(sibling.count("DmSyncBatch") + sibling.count("UserSettingsSyncBatch")).isZero();

    // WHEN the peer accepts a later login THEN sync starts
    accept.set(true);
    Eventually.until("sync pulls from the peer", 40_000, () -> sibling.count("DmSyncBatch") >= 1);
    assertThat(bob.login()).isEqualTo("bob");
  }

  @Test
  @DisplayName("a peer configured as legacy (protocol v1) may use the sync ops without a session from its address;"
      + " any other anonymous puller is 401")
  void legacyPeer(Vertx vertx) {
    TestServer s1 = world.server("s1",
        "{\"peers\":[{\"serverLogin\":\"old\",\"url\":\"ws://127.0.0.1:1/ws\",\"legacy\":true}]}");
    ShineClient anonymous = world.anonymous(s1);

    assertThat(anonymous.request("DmSyncBatch", syncRequest("old")).await().has("items")).isTrue();
    assertThat(anonymous.request("UserSettingsSyncBatch", syncRequest("old")).await().has("items")).isTrue();
    assertRefused(() -> anonymous.request("DmSyncBatch", syncRequest("s2")).await(), 401,
        ErrorCode.NOT_AUTHENTICATED);
  }

  @Test
  @DisplayName("v3 challenge: another expected name is 421 WRONG_SERVER; the hello verifies with the server's key;"
      + " the v2 form is 400 unless the caller is a peer configured with protocol v2")
  void v3Challenge(Vertx vertx) throws Exception {
    StubPeer caller = world.stub();
    TestServer s1 = world.server("s1");
    ShineClient anonymous = world.anonymous(s1);
    String nonce = Base64.getEncoder().encodeToString(new byte[32]);

    assertRefused(() -> anonymous.request("ServerAuthChallenge", ShineClient.object().put("serverLogin", "x")
        .put("expectedServerLogin", "s2").put("nonceB64", nonce)).await(), 421, ErrorCode.WRONG_SERVER);
    assertRefused(() -> anonymous.request("ServerAuthChallenge", ShineClient.object().put("serverLogin", "x")
        .put("expectedServerLogin", "s1").put("nonceB64", "AAAA")).await(), 400, ErrorCode.INVALID_FIELD);
    assertRefused(() -> anonymous.request("ServerAuthChallenge", ShineClient.object().put("serverLogin", "x"))
        .await(), 400, ErrorCode.MISSING_FIELD);
    JsonNode hello = anonymous.request("ServerAuthChallenge", ShineClient.object().put("serverLogin", "x")
        .put("expectedServerLogin", "s1").put("nonceB64", nonce)).await();
    byte[] key = Base64.getDecoder().decode(wellKnown(s1).get("publicKeyB64").asText());
    byte[] signed = ServerIdentity.helloBytes("s1", "x", nonce, hello.get("challengeB64").asText());
    assertThat(hello.get("serverLogin").asText()).isEqualTo("s1");
    assertThat(Ed25519Signer.verify(key, signed, Base64.getDecoder().decode(hello.get("signatureB64").asText())))
        .isTrue();
    assertThat(caller.serverLogin()).isNotEqualTo("s1");
  }

  @Test
  @DisplayName("a login bound to another URL is 401 WRONG_URL; a challenge answers one login only; the URL may be an"
      + " alias of publicUrl")
  void loginBindsTheUrl(Vertx vertx) {
    StubPeer caller = world.stub();
    TestServer s1 = world.server("s1", "{\"publicUrlAliases\":[\"ws://localhost:" + world.port("s1") + "/ws\"]}");
    world.user("mia", List.of(Map.entry("s1", s1.url()), Map.entry(caller.serverLogin(), caller.url())), s1);
    byte[] key = caller.serverKey().privateKey();

    ShineClient wrongUrl = world.anonymous(s1);
    assertRefused(() -> wrongUrl.serverLogin(caller.serverLogin(), "s1", (url, challengeB64) -> Ed25519Signer.sign(
        key, ServerIdentity.loginBytesV3("s1", caller.serverLogin(), caller.url(), challengeB64))).await(), 401,
        ErrorCode.BAD_SIGNATURE);
    ShineClient viaAlias = world.anonymous(s1);
    String alias = "ws://localhost:" + s1.port() + "/ws";
    JsonNode challenge = viaAlias.request("ServerAuthChallenge", ShineClient.object()
        .put("serverLogin", caller.serverLogin()).put("expectedServerLogin", "s1")
        .put("nonceB64", Base64.getEncoder().encodeToString(new byte[32]))).await();
    ObjectNode login = ShineClient.object().put("serverLogin", caller.serverLogin()).put("url", caller.url())
        .put("signatureB64", Base64.getEncoder().encodeToString(Ed25519Signer.sign(key, ServerIdentity.loginBytesV3(
            "s1", caller.serverLogin(), caller.url(), challenge.get("challengeB64").asText()))));
    assertRefused(() -> viaAlias.request("ServerAuthLogin", login).await(), 401, ErrorCode.WRONG_URL);
    // the challenge is gone with that attempt: even a good login now finds none pending
    assertRefused(() -> viaAlias.request("ServerAuthLogin", login.deepCopy().put("url", alias)).await(), 400,
        ErrorCode.NO_CHALLENGE);
    assertThat(caller.sessionOnVia(vertx, s1.url(), alias, "s1")).isNotNull();
  }

  @Test
  @DisplayName("a peer configured with protocol v2 logs in with the v2 strings, both ways; others may not")
  void v2Peer(Vertx vertx) {
    StubPeer old = world.stub().named("old")
        .respond("ServerAuthChallenge", (op, p) -> p.has("expectedServerLogin")
            ? new StubPeer.Error(400, "UNKNOWN_FIELD", "v2 server") : Json.MAPPER.createObjectNode()
            .put("challengeB64", "Y2hhbGxlbmdl").put("serverLogin", "old"))
        .respond("ServerAuthLogin", (op, p) -> Json.MAPPER.createObjectNode().put("serverLogin",
            p.path("serverLogin").asText()))
        .acceptEverything();
    TestServer s1 = world.server("s1", "{\"peers\":[{\"serverLogin\":\"old\",\"url\":\"" + old.url()
        + "\",\"protocol\":\"v2\"}]}");

    // s1 logs in to it with the v2 string, which verifies with s1's key
    Eventually.until("s1 logged in to its v2 peer", 10_000, () -> old.count("ServerAuthLogin") >= 1);
    JsonNode login = old.requests().stream().filter(r -> r.op().equals("ServerAuthLogin")).findFirst().orElseThrow()
        .payload();
    byte[] s1Key = Base64.getDecoder().decode(wellKnownQuietly(s1).get("publicKeyB64").asText());
    assertThat(login.has("url")).isFalse();
    assertThat(Ed25519Signer.verify(s1Key, ServerIdentity.loginBytes("old", "s1", "Y2hhbGxlbmdl"),
        Base64.getDecoder().decode(login.get("signatureB64").asText()))).isTrue();
    // and the v2 peer logs in to s1 with the v2 strings
    ShineClient asOld = world.anonymous(s1);
    JsonNode challenge = asOld.request("ServerAuthChallenge", ShineClient.object().put("serverLogin", "old")).await();
    JsonNode admitted = asOld.request("ServerAuthLogin", ShineClient.object().put("serverLogin", "old")
        .put("signatureB64", Base64.getEncoder().encodeToString(Ed25519Signer.sign(old.serverKey().privateKey(),
            ServerIdentity.loginBytes("s1", "old", challenge.get("challengeB64").asText()))))).await();
    assertThat(admitted.get("serverLogin").asText()).isEqualTo("old");
  }

  @Test
  @DisplayName("key fetches for a claimed name: a failure is remembered (one fetch for many claims) and the"
      + " caller learns no upstream status or text")
  void keyFetchesLimited(Vertx vertx) {
    StubPeer claimed = world.stub().hideKey(true);
    TestServer s1 = world.server("s1");
    world.user("ivy", List.of(Map.entry("s1", s1.url()), Map.entry(claimed.serverLogin(), claimed.url())), s1);

    for (int i = 0; i < 10; i++) {
      ShineClient impostor = world.anonymous(s1);
      assertThatThrownBy(() -> impostor.serverLogin(claimed.serverLogin(), "s1", KeyFile.generate(null).privateKey())
          .await()).isInstanceOfSatisfying(ShineClientException.class, e -> {
            assertThat(e.status()).isEqualTo(401);
            assertThat(e.code()).isEqualTo(ErrorCode.SERVER_KEY_UNAVAILABLE);
            assertThat(e.getMessage()).doesNotContain("404", "secret-internal-detail", claimed.url(), "status");
          });
    }

    assertThat(claimed.keyFetches()).isEqualTo(1);
  }

  @Test
  @DisplayName("key fetches are limited per source address: many names claimed at once cost at most a few fetches")
  void keyFetchesPerSource(Vertx vertx) {
    TestServer s1 = world.server("s1", "{\"egress\":{\"allowCidrs\":[\"127.0.0.0/8\"],\"keyFetchesPerS\":1}}");
    List<StubPeer> claimed = new java.util.ArrayList<>();
    for (int i = 0; i < 6; i++) {
      StubPeer stub = world.stub().hideKey(true);
      claimed.add(stub);
      world.user("ivy" + i, List.of(Map.entry("s1", s1.url()), Map.entry(stub.serverLogin(), stub.url())), s1);
    }

    for (StubPeer stub : claimed) {
      ShineClient impostor = world.anonymous(s1);
      assertRefused(() -> impostor.serverLogin(stub.serverLogin(), "s1", KeyFile.generate(null).privateKey()).await(),
          401, ErrorCode.SERVER_KEY_UNAVAILABLE);
    }

    assertThat(claimed.stream().mapToInt(StubPeer::keyFetches).sum()).isLessThan(claimed.size());
  }

  @Test
  @DisplayName("a v1 peer syncs without a session only from the addresses its URL names")
  void v1PeerOnlyFromItsAddress(Vertx vertx) {
    TestServer s1 = world.server("s1",
        "{\"peers\":[{\"serverLogin\":\"old\",\"url\":\"ws://127.0.0.77:1/ws\",\"protocol\":\"v1\"}]}");
    ShineClient fromElsewhere = world.anonymous(s1);

    assertRefused(() -> fromElsewhere.request("DmSyncBatch", syncRequest("old")).await(), 401,
        ErrorCode.NOT_AUTHENTICATED);
  }

  private static JsonNode wellKnownQuietly(TestServer server) {
    try {
      return wellKnown(server);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static ObjectNode syncRequest(String puller) {
    ObjectNode payload = ShineClient.object().put("sourceServerLogin", puller).put("limit", 10);
    payload.putArray("ackSyncIds");
    return payload;
  }

  private static JsonNode wellKnown(TestServer server) throws Exception {
    HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + server.port() + "/.well-known/shine-server")).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("content-type")).contains("application/json");
    return Json.MAPPER.readTree(response.body());
  }

  private static void assertRefused(Runnable call, int status, String code) {
    assertThatThrownBy(call::run).isInstanceOfSatisfying(ShineClientException.class, e -> {
      assertThat(e.status()).as("status of [%s]", e.getMessage()).isEqualTo(status);
      assertThat(e.code()).as("code of [%s]", e.getMessage()).isEqualTo(code);
    });
  }

}
