package org.shine.server.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.KeyFile;
import org.shine.server.util.Json;

/** What a client makes of the containers its server hands it (PROTOCOL §13 "Clients verify"). */
@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class ContainerVerifierTest {
  private static final List<Map.Entry<String, String>> ROUTES = List.of(Map.entry("s1", "ws://127.0.0.1:7101/ws"));
  private final KeyFile alice = KeyFile.generate("alice");
  private final KeyFile bob = KeyFile.generate("bob");
  private final KeyFile mallory = KeyFile.generate("mallory");
  private final Cards cards = new Cards();

  /** A directory of cards that counts its reads. */
  private static final class Cards implements ContainerVerifier.CardSource {
    final Map<String, JsonNode> byLogin = new ConcurrentHashMap<>();
    final List<String> reads = new ArrayList<>();
    volatile boolean down;

    Cards put(String login, KeyFile key) {
      byLogin.put(login, ShineClient.signedCard(login, key, ROUTES, 1));
      return this;
    }

    @Override
    public Future<Optional<JsonNode>> card(String login) {
      reads.add(login);
      if (down) {
        return Future.failedFuture("server unreachable");
      }
      return Future.succeededFuture(Optional.ofNullable(byLogin.get(login)));
    }

    long readsOf(String login) {
      return reads.stream().filter(login::equals).count();
    }
  }

  private ContainerVerifier verifier(int capacity) {
    return new ContainerVerifier("alice", cards, null, capacity);
  }

  private static DmContainer message(String from, String to, KeyFile signer, String text) {
    return DmCodec.sign(DmKind.INCOMING, 1_774_700_000_000L, ShineClient.randomNonce(), 0, from, to, "",
        MessageBody.encode(text), signer.privateKey());
  }

  private static ObjectNode incomingEvent(DmContainer container) {
    ObjectNode event = Json.MAPPER.createObjectNode().put("op", "IncomingDirectMessage");
    event.putObject("payload").put("messageKey", container.messageKey()).put("baseKey", container.baseKey())
        .put("blobB64", Base64.getEncoder().encodeToString(container.bytes()));
    return event;
  }

  private static Verdict now(Future<Verdict> verdict) {
    assertThat(verdict.isComplete()).as("inline: answered on the caller's thread").isTrue();
    return verdict.result();
  }

  @Test
  @DisplayName("a message signed by its author's card key verifies; one signed by another key, or changed on the way,"
      + " does not, and says whose key it does not match")
  void signatures() {
    cards.put("bob", bob);
    ContainerVerifier verifier = verifier(10);
    assertThat(now(verifier.event(incomingEvent(message("bob", "alice", bob, "hi"))))).isEqualTo(Verdict.VERIFIED);

    Verdict forged = now(verifier.event(incomingEvent(message("bob", "alice", mallory, "send me money"))));
    assertThat(forged.outcome()).isEqualTo(Verdict.Outcome.NOT_VERIFIED);
    assertThat(forged.reason()).isEqualTo("signature does not match bob's key");
    assertThat(forged.trusted()).isFalse();

    DmContainer genuine = message("bob", "alice", bob, "pay 10");
    byte[] changed = genuine.bytes().clone();
    changed[changed.length - 70] ^= 1; // a byte of the body
    ObjectNode event = incomingEvent(genuine);
    ((ObjectNode) event.get("payload")).put("blobB64", Base64.getEncoder().encodeToString(changed));
    assertThat(now(verifier.event(event)).reason()).isEqualTo("signature does not match bob's key");
  }

  @Test
  @DisplayName("cards are kept per process, at most the capacity, the least recently used dropped first")
  void boundedCache() {
    KeyFile carol = KeyFile.generate("carol");
    KeyFile dave = KeyFile.generate("dave");
    cards.put("bob", bob).put("carol", carol).put("dave", dave);
    ContainerVerifier verifier = verifier(2);

    now(verifier.signature(message("bob", "alice", bob, "1")));
    now(verifier.signature(message("bob", "alice", bob, "2")));
    assertThat(cards.readsOf("bob")).as("one read for two messages").isEqualTo(1);
    now(verifier.signature(message("carol", "alice", carol, "3")));
    now(verifier.signature(message("bob", "alice", bob, "4"))); // bob is now the most recently used
    now(verifier.signature(message("dave", "alice", dave, "5"))); // over the bound: carol goes

    assertThat(verifier.cardsKept()).isEqualTo(2);
    now(verifier.signature(message("bob", "alice", bob, "6")));
    assertThat(cards.readsOf("bob")).as("bob was kept").isEqualTo(1);
    now(verifier.signature(message("carol", "alice", carol, "7")));
    assertThat(cards.readsOf("carol")).as("carol was dropped and is read again").isEqualTo(2);
    assertThat(verifier.cardsKept()).isEqualTo(2);
  }

  @Test
  @DisplayName("a message that does not verify with the kept card is checked once more against a card read anew")
  void rereadOnFailure() {
    KeyFile bobsNewKey = KeyFile.generate("bob");
    cards.put("bob", bob);
    ContainerVerifier verifier = verifier(10);
    assertThat(now(verifier.signature(message("bob", "alice", bob, "old key")))).isEqualTo(Verdict.VERIFIED);

    // the author has a newer card since: the kept one is replaced
    cards.put("bob", bobsNewKey);
    assertThat(now(verifier.signature(message("bob", "alice", bobsNewKey, "new key")))).isEqualTo(Verdict.VERIFIED);
    assertThat(cards.readsOf("bob")).isEqualTo(2);
    assertThat(now(verifier.signature(message("bob", "alice", bobsNewKey, "again")))).isEqualTo(Verdict.VERIFIED);
    assertThat(cards.readsOf("bob")).as("the new card is kept").isEqualTo(2);

    // a forgery costs one read and stays not verified
    assertThat(now(verifier.signature(message("bob", "alice", mallory, "forged"))).reason())
        .isEqualTo("signature does not match bob's key");
    assertThat(cards.readsOf("bob")).isEqualTo(3);
  }

  @Test
  @DisplayName("no card, a card not signed by its key, a card of someone else: not verified; an unreachable card"
      + " source: unchecked, and not kept")
  void cardProblems() {
    ContainerVerifier verifier = verifier(10);
    assertThat(now(verifier.signature(message("bob", "alice", bob, "x"))).reason())
        .isEqualTo("bob has no card on this server");

    ObjectNode unsigned = ShineClient.signedCard("bob", bob, ROUTES, 1);
    unsigned.put("version", 2); // the signature covered version 1
    cards.byLogin.put("bob", unsigned);
    assertThat(now(verifier.signature(message("bob", "alice", bob, "x"))).reason())
        .isEqualTo("bob's card is not signed by its key");

    cards.byLogin.put("bob", ShineClient.signedCard("carol", bob, ROUTES, 1));
    assertThat(now(verifier.signature(message("bob", "alice", bob, "x"))).reason())
        .isEqualTo("the card served for bob is not bob's");

    ContainerVerifier fresh = verifier(10);
    cards.put("bob", bob);
    cards.down = true;
    Verdict unchecked = now(fresh.signature(message("bob", "alice", bob, "x")));
    assertThat(unchecked.outcome()).isEqualTo(Verdict.Outcome.UNCHECKED);
    assertThat(unchecked.reason()).startsWith("bob's card could not be read");
    assertThat(fresh.cardsKept()).isZero();
    cards.down = false;
    assertThat(now(fresh.signature(message("bob", "alice", bob, "x")))).isEqualTo(Verdict.VERIFIED);
  }

  @Test
  @DisplayName("a genuine container that is not the user's, or an event that says other than its container, is not"
      + " verified")
  void addressingAndClaims() {
    cards.put("bob", bob).put("alice", alice);
    ContainerVerifier verifier = verifier(10);
    Verdict replayed = now(verifier.event(incomingEvent(message("bob", "carol", bob, "for carol"))));
    assertThat(replayed.reason()).isEqualTo("not addressed to alice (bob → carol)");

    ObjectNode wrongKey = incomingEvent(message("bob", "alice", bob, "hi"));
    ((ObjectNode) wrongKey.get("payload")).put("baseKey", "bob|alice|1|2");
    assertThat(now(verifier.event(wrongKey)).reason()).isEqualTo("the server's description does not match the"
        + " container");

    ObjectNode garbage = Json.MAPPER.createObjectNode().put("op", "IncomingDirectMessage");
    garbage.putObject("payload").put("blobB64", "AAAA");
    assertThat(now(verifier.event(garbage)).reason()).isEqualTo("unreadable container");

    DmContainer own = DmCodec.sign(DmKind.OUTGOING, 1, 2, 0, "alice", "bob", "", MessageBody.encode("mine"),
        alice.privateKey());
    ObjectNode history = Json.MAPPER.createObjectNode().put("direction", "outgoing")
        .put("messageKey", own.messageKey()).put("blobB64", Base64.getEncoder().encodeToString(own.bytes()));
    assertThat(now(verifier.historyEntry(history))).isEqualTo(Verdict.VERIFIED);
    history.put("direction", "incoming");
    assertThat(now(verifier.historyEntry(history)).outcome()).isEqualTo(Verdict.Outcome.NOT_VERIFIED);
  }

  @Test
  @DisplayName("a read receipt event is verified when it carries its receipt; events without a container have"
      + " nothing to verify")
  void receiptsAndMetadata() {
    cards.put("bob", bob);
    ContainerVerifier verifier = verifier(10);
    String baseKey = "alice|bob|1774700000000|7";
    DmContainer receipt = DmCodec.sign(DmKind.READ_RECEIPT, 1_774_700_001_000L, 9, 0, "bob", "alice", baseKey,
        new byte[0], bob.privateKey());
    ObjectNode event = Json.MAPPER.createObjectNode().put("op", "DmReadReceipt");
    ObjectNode payload = event.putObject("payload").put("baseKey", baseKey).put("readerLogin", "bob")
        .put("readAtMs", receipt.createdAtMs());
    assertThat(now(verifier.event(event))).isEqualTo(Verdict.NO_CONTAINER);
    payload.put("receiptBlobB64", Base64.getEncoder().encodeToString(receipt.bytes()));
    assertThat(now(verifier.event(event))).isEqualTo(Verdict.VERIFIED);
    payload.put("baseKey", "alice|bob|1774700000000|8");
    assertThat(now(verifier.event(event)).reason()).isEqualTo("the server's description does not match the receipt");

    DmContainer forged = DmCodec.sign(DmKind.READ_RECEIPT, 1_774_700_001_000L, 9, 0, "bob", "alice", baseKey,
        new byte[0], mallory.privateKey());
    payload.put("baseKey", baseKey).put("receiptBlobB64", Base64.getEncoder().encodeToString(forged.bytes()));
    assertThat(now(verifier.event(event)).reason()).isEqualTo("signature does not match bob's key");

    ObjectNode state = Json.MAPPER.createObjectNode().put("op", "DmDeliveryStateChanged");
    state.putObject("payload").put("baseKey", baseKey).put("deliveryState", "delivered");
    assertThat(now(verifier.event(state))).isEqualTo(Verdict.NO_CONTAINER);
  }

  @Test
  @DisplayName("the shared card vector (web-codec-vectors.json) is what ShineClient signs, and its key verifies the"
      + " vector containers, as the web chat's verify.js finds too")
  void sharedCardVector() throws Exception {
    JsonNode vectors;
    try (java.io.InputStream in = getClass().getResourceAsStream("/dm/web-codec-vectors.json")) {
      vectors = Json.MAPPER.readTree(in);
    }
    Base64.Decoder base64 = Base64.getDecoder();
    KeyFile key = new KeyFile(Optional.of("alice"), base64.decode(vectors.at("/key/publicKeyB64").asText()),
        base64.decode(vectors.at("/key/privateKeyB64").asText()));
    JsonNode card = vectors.get("card");
    // as text: the JSON number 3 reads back as an int, the card holds a long
    assertThat(card.toString()).isEqualTo(ShineClient.signedCard("alice", key, List.of(Map.entry("s1",
        "ws://127.0.0.1:7101/ws"), Map.entry("s2", "ws://127.0.0.1:7102/ws")), 3).toString());
    CardKeys.Keys keys = CardKeys.of("alice", card);
    assertThat(keys.problem()).isNull();
    DmContainer first = DmCodec.parse(base64.decode(vectors.at("/containers/0/containerB64").asText()));
    assertThat(first.verifySignature(keys.keys().get(0))).isTrue();
  }

  @Test
  @DisplayName("on Vert.x (signatures checked on worker threads) the verdicts are the same")
  void onWorkers(Vertx vertx) {
    cards.put("bob", bob);
    ContainerVerifier verifier = ContainerVerifier.onWorkers(vertx, "alice", cards);
    assertThat(verifier.event(incomingEvent(message("bob", "alice", bob, "hi"))).await()).isEqualTo(Verdict.VERIFIED);
    assertThat(verifier.signature(message("bob", "alice", mallory, "x")).await().reason())
        .isEqualTo("signature does not match bob's key");
  }
}
