package org.shine.server.directory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.DeviceCard;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.client.ShineClientException;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.KeyFile;
import org.shine.server.hub.HubHttp;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.support.MutableClock;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/**
 * v3 cards over a real WebSocket (PROTOCOL §4 v3): several device keys, rotation, revocation, recovery, the rules a
 * card must follow, and the chain a server that missed versions fetches.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 90, timeUnit = TimeUnit.SECONDS)
class CardsV3IT {
  /** A recipient whose only server is not running: what is sent to it stays accepted. */
  private static final Map.Entry<String, String> NOWHERE = Map.entry("127.0.0.22", "ws://127.0.0.22:2/ws");
  private static final MutableClock CLOCK = MutableClock.now();
  private static TestWorld world;
  private static Vertx vertx;
  private static TestServer home;
  private static List<Map.Entry<String, String>> homeRoute;

  @BeforeAll
  static void start() {
    world = TestWorld.on(Vertx.vertx()).clock(CLOCK);
    vertx = world.vertx();
    home = world.server("home");
    homeRoute = List.of(Map.entry("home", home.url()));
  }

  @AfterAll
  static void stop() {
    world.close();
    vertx.close().await();
  }

  private static ShineClient anonymous() {
    return world.anonymous(home);
  }

  private static JsonNode publish(ObjectNode card) {
    return anonymous().request("PublishUserCard", ShineClient.object().set("card", card)).await();
  }

  private static String refusal(Future<?> request) {
    try {
      request.await();
      return "accepted";
    } catch (ShineClientException e) {
      return e.status() + " " + e.code();
    }
  }

  private static String publishRefusal(ObjectNode card) {
    return refusal(anonymous().request("PublishUserCard", ShineClient.object().set("card", card)));
  }

  private static ShineClient session(String login, KeyFile key) {
    ShineClient client = anonymous();
    client.login(login, key).await();
    return client;
  }

  private static JsonNode card(String login) {
    return anonymous().request("GetUserCard", ShineClient.object().put("login", login)).await().get("card");
  }

  /** A recipient served nowhere that runs: its messages stay accepted. */
  private static String absentRecipient() {
    String login = TestWorld.unique("away");
    publish(ShineClient.signedCard(login, KeyFile.generate(login), List.of(NOWHERE), 1));
    return login;
  }

  private static SignedPair pair(String from, KeyFile key, String to, long createdAtMs, long revision, long nonce) {
    return ShineClient.signPair(from, key, to, createdAtMs, nonce, revision, "hi".getBytes(StandardCharsets.UTF_8));
  }

  @Test
  @DisplayName("two devices log in with their own keys; a login naming one device is checked with that key alone")
  void devicesLogIn() {
    String login = TestWorld.unique("pia");
    KeyFile laptop = KeyFile.generate(login);
    KeyFile phone = KeyFile.generate(login);
    DeviceCard first = DeviceCard.first(login, laptop.publicKeyB64(), "laptop", homeRoute);
    publish(first.sign(laptop));
    publish(DeviceCard.next(card(login)).addKey(phone.publicKeyB64(), "phone").sign(laptop));

    assertThat(anonymous().login(login, phone).await().get("login").asText()).isEqualTo(login);
    assertThat(anonymous().login(login, laptop, true).await().get("login").asText()).isEqualTo(login);
    ShineClient wrongDevice = anonymous();
    ObjectNode named = ShineClient.object().put("login", login).put("publicKeyB64", laptop.publicKeyB64());
    String challenge = wrongDevice.request("AuthChallenge", ShineClient.object().put("login", login)).await()
        .get("challengeB64").asText();
    byte[] byPhone = org.shine.server.dm.Ed25519Signer.sign(phone.privateKey(),
        ("SHiNE_AUTH|home|" + challenge).getBytes(StandardCharsets.UTF_8));
    named.put("signatureB64", java.util.Base64.getEncoder().encodeToString(byPhone));
    assertThat(refusal(wrongDevice.request("AuthLogin", named))).isEqualTo("401 " + ErrorCode.BAD_SIGNATURE);
    assertThat(card(login).get("keys")).hasSize(2);
  }

  @Test
  @DisplayName("rotate: a retired key signs a message written before, in its window; nothing new, no edit, no tombstone")
  void rotation() {
    String login = TestWorld.unique("rui");
    String to = absentRecipient();
    KeyFile old = KeyFile.generate(login);
    KeyFile fresh = KeyFile.generate(login);
    publish(DeviceCard.first(login, old.publicKeyB64(), null, homeRoute).sign(old));
    long writtenAt = CLOCK.millis();
    SignedPair beforeRotation = pair(login, old, to, writtenAt, 0, 11);
    SignedPair sentBefore = pair(login, old, to, writtenAt, 0, 12);
    ShineClient sender = session(login, old);
    sender.sendPair(sentBefore).await();
    CLOCK.advance(Duration.ofSeconds(2));
    publish(DeviceCard.next(card(login)).addKey(fresh.publicKeyB64(), null).retire(old.publicKeyB64(),
        CLOCK.millis() - 1000).sign(old));
    CLOCK.advance(Duration.ofSeconds(2));
    ShineClient device = session(login, fresh);

    assertThat(device.sendPair(beforeRotation).await().get("deliveryState").asText()).isEqualTo("accepted");
    assertThat(device.sendPair(sentBefore).await().get("deliveryState").asText()).isEqualTo("accepted");
    assertThat(refusal(device.sendPair(pair(login, old, to, CLOCK.millis(), 0, 13))))
        .isEqualTo("400 " + ErrorCode.BAD_SIGNATURE);
    assertThat(refusal(device.sendPair(pair(login, old, to, writtenAt, 1, 12))))
        .isEqualTo("400 " + ErrorCode.BAD_SIGNATURE);
    DmContainer tombstone = ShineClient.signTombstone(login, old, to, sentBefore.outgoing().messageKey(),
        CLOCK.millis());
    assertThat(refusal(device.deleteMessage(tombstone))).isEqualTo("400 " + ErrorCode.BAD_SIGNATURE);
    assertThat(device.sendPair(pair(login, fresh, to, writtenAt, 1, 12)).await().get("deliveryState").asText())
        .isEqualTo("accepted");
    assertThat(refusal(anonymous().login(login, old))).isEqualTo("401 " + ErrorCode.BAD_SIGNATURE);
  }

  @Test
  @DisplayName("revoke: the device's sessions close, its accepted messages fail, and it signs nothing any more")
  void revocation() {
    String login = TestWorld.unique("rev");
    String to = absentRecipient();
    KeyFile stolen = KeyFile.generate(login);
    KeyFile kept = KeyFile.generate(login);
    publish(DeviceCard.first(login, stolen.publicKeyB64(), "stolen", homeRoute).addKey(kept.publicKeyB64(), "kept")
        .sign(kept));
    ShineClient thief = session(login, stolen);
    AtomicBoolean thiefClosed = new AtomicBoolean();
    thief.onClose(() -> thiefClosed.set(true));
    ShineClient owner = session(login, kept);
    List<JsonNode> events = new CopyOnWriteArrayList<>();
    owner.onEvent(events::add);
    SignedPair byThief = pair(login, stolen, to, CLOCK.millis(), 0, 21);
    SignedPair byOwner = pair(login, kept, to, CLOCK.millis(), 0, 22);
    assertThat(thief.sendPair(byThief).await().get("deliveryState").asText()).isEqualTo("accepted");
    owner.sendPair(byOwner).await();

    publish(DeviceCard.next(card(login)).revoke(stolen.publicKeyB64()).sign(kept));

    await(() -> thiefClosed.get());
    await(() -> events.stream().anyMatch(e -> e.path("op").asText().equals("DmDeliveryStateChanged")
        && e.path("payload").path("baseKey").asText().equals(byThief.incoming().baseKey())
        && e.path("payload").path("deliveryState").asText().equals("failed")
        && e.path("payload").path("code").asText().equals(ErrorCode.KEY_REVOKED)));
    JsonNode history = owner.request("GetDirectMessages", ShineClient.object().put("peer", to)).await();
    for (JsonNode message : history.get("messages")) {
      String expected = message.get("baseKey").asText().equals(byThief.incoming().baseKey()) ? "failed"
          : "accepted";
      assertThat(message.get("deliveryState").asText()).as(message.get("baseKey").asText()).isEqualTo(expected);
    }
    assertThat(refusal(owner.sendPair(pair(login, stolen, to, CLOCK.millis(), 0, 23))))
        .isEqualTo("400 " + ErrorCode.KEY_REVOKED);
    assertThat(owner.sendPair(byThief).await().get("deliveryState").asText()).as("an identical repeat is an ACK")
        .isEqualTo("failed");
    assertThat(refusal(anonymous().login(login, stolen))).isEqualTo("401 " + ErrorCode.BAD_SIGNATURE);
    // a card that leaves the revocation out and lists the key again: the server remembers (user_key_history)
    ObjectNode readmits = DeviceCard.first(login, kept.publicKeyB64(), "kept", homeRoute)
        .addKey(stolen.publicKeyB64(), "stolen").version(card(login).get("version").asLong() + 1).sign(kept);
    assertThat(publishRefusal(readmits)).isEqualTo("400 " + ErrorCode.KEY_REVOKED);
  }

  @Test
  @DisplayName("revoke: the hub tokens the revoked device obtained stop working; the other device's go on")
  void revocationEndsHubTokens() throws Exception {
    String login = TestWorld.unique("hub");
    KeyFile stolen = KeyFile.generate(login);
    KeyFile kept = KeyFile.generate(login);
    publish(DeviceCard.first(login, stolen.publicKeyB64(), null, homeRoute).addKey(kept.publicKeyB64(), null)
        .sign(kept));
    HubHttp hub = new HubHttp(home);
    JsonNode thiefTokens = hub.tokens(new TestUser(login, stolen));
    String ownerToken = hub.tokens(new TestUser(login, kept)).get("accessToken").asText();
    String cardPath = "/cards/" + login;
    assertThat(hub.get(cardPath, thiefTokens.get("accessToken").asText()).statusCode()).isEqualTo(200);

    publish(DeviceCard.next(card(login)).revoke(stolen.publicKeyB64()).sign(kept));

    await(() -> {
      try {
        return hub.get(cardPath, thiefTokens.get("accessToken").asText()).statusCode() == 401;
      } catch (Exception e) {
        throw new AssertionError(e);
      }
    });
    assertThat(hub.get(cardPath, ownerToken).statusCode()).isEqualTo(200);
    assertThat(hub.post("/token/refresh", null, ShineClient.object().put("refreshToken",
        thiefTokens.get("refreshToken").asText()).toString()).statusCode()).isEqualTo(401);
  }

  @Test
  @DisplayName("recover: the recovery key replaces every device key in a new epoch; the old devices are out")
  void recovery() {
    String login = TestWorld.unique("rec");
    KeyFile lost = KeyFile.generate(login);
    KeyFile recovery = KeyFile.generate(login);
    KeyFile newDevice = KeyFile.generate(login);
    publish(DeviceCard.first(login, lost.publicKeyB64(), null, homeRoute).recoveryKey(recovery.publicKeyB64())
        .sign(lost));
    ObjectNode thiefCard = DeviceCard.next(card(login)).recoverTo(KeyFile.generate(login).publicKeyB64(), null)
        .sign(lost);
    assertThat(publishRefusal(thiefCard)).as("a device key cannot start an epoch")
        .isEqualTo("403 " + ErrorCode.RECOVERY_KEY_REQUIRED);
    assertThat(publishRefusal(DeviceCard.next(card(login)).recoveryKey(KeyFile.generate(login).publicKeyB64())
        .sign(lost))).as("a device key cannot change the recovery key")
        .isEqualTo("403 " + ErrorCode.RECOVERY_KEY_REQUIRED);

    publish(DeviceCard.next(card(login)).recoverTo(newDevice.publicKeyB64(), "new").version(1).sign(recovery));

    assertThat(card(login).get("epoch").asLong()).isEqualTo(1);
    assertThat(refusal(anonymous().login(login, lost))).isEqualTo("401 " + ErrorCode.BAD_SIGNATURE);
    assertThat(anonymous().login(login, newDevice).await().get("login").asText()).isEqualTo(login);
    assertThat(publishRefusal(DeviceCard.next(card(login)).version(9).sign(lost)))
        .isEqualTo("400 " + ErrorCode.KEY_REVOKED);
  }

  @Test
  @DisplayName("a card that drops a key is 400, more than eight devices is 400, and malformed key lists are 400")
  void refusedCards() {
    String login = TestWorld.unique("bad");
    KeyFile key = KeyFile.generate(login);
    publish(DeviceCard.first(login, key.publicKeyB64(), null, homeRoute).sign(key));
    KeyFile other = KeyFile.generate(login);

    ObjectNode dropsKey = DeviceCard.first(login, other.publicKeyB64(), null, homeRoute).version(2).sign(key);
    assertThat(publishRefusal(dropsKey)).isEqualTo("400 " + ErrorCode.KEY_DROPPED);
    DeviceCard nine = DeviceCard.next(card(login));
    for (int i = 0; i < 8; i++) {
      nine.addKey(KeyFile.generate(login).publicKeyB64(), "d" + i);
    }
    assertThat(publishRefusal(nine.sign(key))).isEqualTo("400 " + ErrorCode.INVALID_FIELD);
    ObjectNode emptyRecovery = DeviceCard.next(card(login)).sign(key).put("recoveryKeyB64", "");
    assertThat(publishRefusal(emptyRecovery)).isEqualTo("400 " + ErrorCode.INVALID_FIELD);
    ObjectNode twice = DeviceCard.next(card(login)).recoveryKey(key.publicKeyB64()).sign(key);
    assertThat(publishRefusal(twice)).isEqualTo("400 " + ErrorCode.INVALID_FIELD);
    ObjectNode tooHigh = DeviceCard.next(card(login)).version(1L << 53).sign(key);
    assertThat(publishRefusal(tooHigh)).isEqualTo("400 " + ErrorCode.INVALID_FIELD);
    ObjectNode forged = DeviceCard.next(card(login)).addKey(other.publicKeyB64(), null).sign(key)
        .put("signerKeyB64", other.publicKeyB64());
    assertThat(publishRefusal(forged)).isEqualTo("400 " + ErrorCode.BAD_SIGNATURE);
    assertThat(card(login).get("version").asLong()).isEqualTo(1);
  }

  @Test
  @DisplayName("GetUserCard with since… serves the chain of cards after that place, oldest first, ending with the card")
  void chain() {
    String login = TestWorld.unique("chn");
    KeyFile key = KeyFile.generate(login);
    publish(DeviceCard.first(login, key.publicKeyB64(), null, homeRoute).sign(key));
    for (int i = 0; i < 3; i++) {
      publish(DeviceCard.next(card(login)).addKey(KeyFile.generate(login).publicKeyB64(), "d" + i).sign(key));
    }

    JsonNode answer = anonymous().request("GetUserCard", ShineClient.object().put("login", login)
        .put("sinceEpoch", 0).put("sinceVersion", 2)).await();

    assertThat(answer.get("chain")).hasSize(2);
    assertThat(answer.get("chain").get(0).get("version").asLong()).isEqualTo(3);
    assertThat(answer.get("chain").get(1)).isEqualTo(answer.get("card"));
    assertThat(refusal(anonymous().request("GetUserCard", ShineClient.object().put("login", login)
        .put("sinceEpoch", 0)))).isEqualTo("400 " + ErrorCode.MISSING_FIELD);
  }

  @Test
  @DisplayName("a server that missed versions fetches the chain from the card's routes and takes the newest card")
  void missedVersionsAreFetched() {
    TestWorld pair = world.child();
    TestServer[] servers = pair.servers(TestWorld.unique("sa"), TestWorld.unique("sb"));
    TestServer first = servers[0];
    TestServer second = servers[1];
    String login = TestWorld.unique("gap");
    KeyFile key = KeyFile.generate(login);
    KeyFile next = KeyFile.generate(login);
    List<Map.Entry<String, String>> routes = TestWorld.routes(first, second);
    ObjectNode v1 = DeviceCard.first(login, key.publicKeyB64(), null, routes).sign(key);
    for (TestServer server : servers) {
      pair.anonymous(server).request("PublishUserCard", ShineClient.object().set("card", v1)).await();
    }
    second.close();
    ShineClient onFirst = pair.anonymous(first);
    ObjectNode v2 = DeviceCard.next(v1).addKey(next.publicKeyB64(), null).sign(key);
    onFirst.request("PublishUserCard", ShineClient.object().set("card", v2)).await();
    ObjectNode v3 = DeviceCard.next(v2).retire(key.publicKeyB64(), CLOCK.millis()).sign(next);
    onFirst.request("PublishUserCard", ShineClient.object().set("card", v3)).await();
    TestServer back = pair.server(second.serverLogin());

    JsonNode published = pair.anonymous(back).request("PublishUserCard", ShineClient.object().set("card", v3))
        .await();

    assertThat(published.get("version").asLong()).isEqualTo(3);
    JsonNode served = pair.anonymous(back).request("GetUserCard", ShineClient.object().put("login", login)).await();
    assertThat(served.get("card").toString()).isEqualTo(v3.toString());
    assertThat(pair.anonymous(back).login(login, next).await().get("login").asText()).isEqualTo(login);
    pair.close();
  }

  @Test
  @DisplayName("first sight of a login relayed by a server that is not its route asks the login's routes, and a forged"
      + " card does not follow from theirs")
  void firstSightAsksTheRoutes() {
    TestWorld trio = world.child();
    // home knows no peer: the only way the stranger learns the genuine card is to ask home for it
    TestServer home = trio.server(TestWorld.unique("se"));
    String login = TestWorld.unique("tofu");
    KeyFile real = KeyFile.generate(login);
    ObjectNode genuine = DeviceCard.first(login, real.publicKeyB64(), null, TestWorld.routes(home)).sign(real);
    trio.anonymous(home).request("PublishUserCard", ShineClient.object().set("card", genuine)).await();
    TestServer[] servers = trio.servers(TestWorld.unique("sf"), TestWorld.unique("sg"));
    TestServer stranger = servers[0];
    TestServer relayer = servers[1];
    KeyFile forger = KeyFile.generate(login);
    ObjectNode forged = DeviceCard.first(login, forger.publicKeyB64(), null, TestWorld.routes(home)).version(5)
        .sign(forger);

    String answer = refusal(trio.serverSession(relayer, stranger).request("PublishUserCard",
        ShineClient.object().set("card", forged)));

    assertThat(answer).isEqualTo("409 " + ErrorCode.CARD_CHAIN_GAP);
    JsonNode kept = trio.anonymous(stranger).request("GetUserCard", ShineClient.object().put("login", login)).await();
    assertThat(kept.get("card").toString()).isEqualTo(genuine.toString());
    trio.close();
  }

  @Test
  @DisplayName("a peer configured as v2 gets v1 cards relayed but never a v3 card; a v3 peer gets both")
  void oldPeersNeverSeeV3Cards() {
    TestWorld relay = world.child();
    org.shine.server.support.StubPeer old = relay.stub().named(TestWorld.unique("old")).acceptEverything();
    org.shine.server.support.StubPeer fresh = relay.stub().named(TestWorld.unique("new")).acceptEverything();
    TestServer server = relay.server(TestWorld.unique("sh"), "{\"peers\":[{\"serverLogin\":\"" + old.serverLogin()
        + "\",\"url\":\"" + old.url() + "\",\"protocol\":\"v2\"},{\"serverLogin\":\"" + fresh.serverLogin()
        + "\",\"url\":\"" + fresh.url() + "\"}]}");
    List<Map.Entry<String, String>> routes = TestWorld.routes(server);
    String v1Login = TestWorld.unique("vone");
    String v3Login = TestWorld.unique("vthree");
    KeyFile v3Key = KeyFile.generate(v3Login);
    ShineClient client = relay.anonymous(server);
    client.request("PublishUserCard", ShineClient.object().set("card",
        ShineClient.signedCard(v1Login, KeyFile.generate(v1Login), routes, 1))).await();
    client.request("PublishUserCard", ShineClient.object().set("card",
        DeviceCard.first(v3Login, v3Key.publicKeyB64(), null, routes).sign(v3Key))).await();

    await(() -> cardsRelayed(fresh).size() == 2);
    await(() -> cardsRelayed(old).contains(v1Login));
    assertThat(cardsRelayed(fresh)).containsExactlyInAnyOrder(v1Login, v3Login);
    assertThat(cardsRelayed(old)).containsOnly(v1Login);
    relay.close();
  }

  private static List<String> cardsRelayed(org.shine.server.support.StubPeer peer) {
    return peer.requests().stream().filter(r -> r.op().equals("PublishUserCard"))
        .map(r -> r.payload().path("card").path("login").asText()).filter(login -> !login.isEmpty()).toList();
  }

  @Test
  @DisplayName("server ops: the author's server still hands on what a retired key signed, past its window; an anonymous"
      + " caller cannot; a revoked key is refused on every op")
  void serverOps() {
    TestWorld pair = world.child();
    TestServer[] servers = pair.servers(TestWorld.unique("sc"), TestWorld.unique("sd"));
    TestServer here = servers[0];
    TestServer sibling = servers[1];
    String login = TestWorld.unique("srv");
    String to = TestWorld.unique("peer");
    KeyFile old = KeyFile.generate(login);
    KeyFile current = KeyFile.generate(login);
    KeyFile stolen = KeyFile.generate(login);
    List<Map.Entry<String, String>> routes = TestWorld.routes(here, sibling);
    ObjectNode first = DeviceCard.first(login, old.publicKeyB64(), null, routes).addKey(current.publicKeyB64(), null)
        .addKey(stolen.publicKeyB64(), null).sign(current);
    ObjectNode recipient = ShineClient.signedCard(to, KeyFile.generate(to), List.of(NOWHERE), 1);
    long writtenAt = CLOCK.millis();
    SignedPair beforeRotation = pair(login, old, to, writtenAt, 0, 31);
    SignedPair byStolen = pair(login, stolen, to, writtenAt, 0, 32);
    ObjectNode rotatedAndRevoked = DeviceCard.next(first).retire(old.publicKeyB64(), writtenAt + 1)
        .revoke(stolen.publicKeyB64()).sign(current);
    ShineClient anonymous = pair.anonymous(here);
    for (ObjectNode card : List.of(recipient, first, rotatedAndRevoked)) {
      anonymous.request("PublishUserCard", ShineClient.object().set("card", card)).await();
    }
    CLOCK.advance(Duration.ofHours(2));
    ShineClient fromSibling = pair.serverSession(sibling, here);

    assertThat(refusal(anonymous.request("ReceiveOutcomingMessage", forward(beforeRotation, null))))
        .isEqualTo("400 " + ErrorCode.BAD_SIGNATURE);
    assertThat(fromSibling.request("ReceiveOutcomingMessage", forward(beforeRotation, sibling.serverLogin()))
        .await().get("outgoingKey").asText()).isEqualTo(beforeRotation.outgoing().messageKey());
    assertThat(refusal(fromSibling.request("ReceiveOutcomingMessage", forward(byStolen, sibling.serverLogin()))))
        .isEqualTo("400 " + ErrorCode.KEY_REVOKED);
    assertThat(refusal(anonymous.request("ReceiveOutcomingMessage", forward(byStolen, null))))
        .isEqualTo("400 " + ErrorCode.KEY_REVOKED);
    pair.close();
  }

  private static ObjectNode forward(SignedPair pair, String sourceServerLogin) {
    ObjectNode payload = ShineClient.object()
        .put("incomingBlobB64", java.util.Base64.getEncoder().encodeToString(pair.incoming().bytes()))
        .put("outgoingBlobB64", java.util.Base64.getEncoder().encodeToString(pair.outgoing().bytes()));
    return sourceServerLogin == null ? payload : payload.put("sourceServerLogin", sourceServerLogin);
  }

  private static void await(java.util.function.BooleanSupplier condition) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within 20 s");
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }
}
