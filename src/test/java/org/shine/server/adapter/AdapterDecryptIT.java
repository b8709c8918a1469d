package org.shine.server.adapter;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.shine.server.client.MessageBody;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.BodyCipher;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.Hpke;
import org.shine.server.dm.KeyFile;
import org.shine.server.support.Eventually;
import org.shine.server.support.LogCapture;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/**
 * The reference adapter opens encrypted bodies with its key file's encryption keys before the handler sees an event
 * (PROTOCOL §4 v3 "Hub adapter"): over a real server, its hub and its card route, with seed 004's commit-then-ACK as
 * it is.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class AdapterDecryptIT {
  private static final String HUB = "{\"hub\":{\"visibilityTimeoutS\":1,\"maxWaitS\":1}}";
  private final List<HubAdapter> adapters = new ArrayList<>();
  private TestWorld world;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx);
  }

  @AfterEach
  void close() throws Exception {
    for (HubAdapter adapter : adapters) {
      adapter.stop();
    }
    world.close();
  }

  @Test
  @DisplayName("with the user's encryption keys: an encrypted body is handed on opened (bodyB64, text), a plaintext"
      + " one as such; a body sealed to a key the user does not hold and a container whose signature does not verify"
      + " end rejected with their reason, committed and ACKed once, never handled, never retried")
  void opensBodies(@TempDir Path dir) throws Exception {
    TestServer server = world.server("s1", HUB);
    TestUser alice = world.user("alice", server);
    TestUser bob = world.user("bob", server);
    Map<String, AtomicInteger> commits = new ConcurrentHashMap<>();
    List<JsonNode> handled = new CopyOnWriteArrayList<>();
    Inbox inbox = Inbox.open(dir.resolve("inbox.db").toString());
    start(server, bob.key(), inbox, handled, commits);

    // GIVEN alice's messages to bob: sealed to bob's encryption key, sealed to a key he does not hold, plaintext
    ShineClient aliceSession = world.session(alice, server);
    byte[] bobsKey = bob.key().encryptionKey().orElseThrow().publicKey();
    ShineClient.SignedPair secret = sealedPair(alice, bob, "meet at noon", bobsKey);
    aliceSession.sendPair(secret).await();
    byte[] foreignKey = Hpke.generateKeyPair().publicKey();
    ShineClient.SignedPair foreign = sealedPair(alice, bob, "not for bob's devices", foreignKey);
    aliceSession.sendPair(foreign).await();
    String plain = aliceSession.sendText("alice", alice.key(), "bob", "hello in the clear").await().get("baseKey")
        .asText();
    // and a container not signed by alice's key, as a forging server would hand it out
    DmContainer forged = DmCodec.sign(DmKind.INCOMING, System.currentTimeMillis(), ShineClient.randomNonce(), 0,
        "alice", "bob", "", BodyCipher.sealBody(MessageBody.encode("send me your key"), bobsKey, "x", DmKind.INCOMING,
            0), KeyFile.generate("alice").privateKey());
    ObjectNode forgedPayload = Json.MAPPER.createObjectNode().put("messageKey", forged.messageKey())
        .put("baseKey", forged.baseKey()).put("blobB64", Base64.getEncoder().encodeToString(forged.bytes()));
    String forgedKey = AdapterVerifyIT.enqueue(world, server, "IncomingDirectMessage", forged.messageKey() + "|r0",
        forgedPayload);
    String foreignKeyEvent = "IncomingDirectMessage|" + foreign.incoming().messageKey() + "|r0";

    // THEN the encrypted message reaches the handler opened, its signed container as the server had it
    Eventually.until("both readable messages handled", 20_000, () -> handledMessage(handled,
        secret.incoming().baseKey()) != null && handledMessage(handled, plain) != null);
    JsonNode opened = handledMessage(handled, secret.incoming().baseKey()).get("payload");
    assertThat(opened.get("text").asText()).isEqualTo("meet at noon");
    assertThat(opened.get("encrypted").asBoolean()).isTrue();
    assertThat(Base64.getDecoder().decode(opened.get("bodyB64").asText())).isEqualTo(
        MessageBody.encode("meet at noon"));
    assertThat(opened.get("blobB64").asText()).isEqualTo(Base64.getEncoder().encodeToString(
        secret.incoming().bytes()));
    JsonNode clear = handledMessage(handled, plain).get("payload");
    assertThat(clear.get("text").asText()).isEqualTo("hello in the clear");
    assertThat(clear.get("encrypted").asBoolean()).isFalse();

    // and the two others end rejected with their reasons, never handled
    Eventually.until("both rejected", 20_000, () -> rows(inbox::rejected).size() == 2);
    Map<String, String> reasons = new ConcurrentHashMap<>();
    for (Inbox.Row row : inbox.rejected()) {
      reasons.put(row.eventKey(), row.lastError());
      assertThat(row.attempts()).isEqualTo(1);
    }
    assertThat(reasons).containsOnlyKeys(forgedKey, foreignKeyEvent);
    assertThat(reasons.get(forgedKey)).isEqualTo("signature does not match alice's key");
    assertThat(reasons.get(foreignKeyEvent)).isEqualTo("cannot decrypt on this device: it holds no key "
        + BodyCipher.kid(foreignKey));
    assertThat(handled).noneMatch(e -> e.get("eventKey").asText().equals(forgedKey)
        || e.get("eventKey").asText().equals(foreignKeyEvent));

    // each event was committed once and ACKed; well past the retry delay nothing is tried again
    Eventually.until("every event ACKed", 10_000, () -> world.sql(server).count(
        "SELECT count(*) FROM hub_queue WHERE login = 'bob' AND NOT acked") == 0);
    Thread.sleep(500);
    assertThat(commits.get(forgedKey).get()).isEqualTo(1);
    assertThat(commits.get(foreignKeyEvent).get()).isEqualTo(1);
    assertThat(inbox.rejected()).allMatch(row -> row.attempts() == 1 && row.status().equals("rejected"));
    assertThat(inbox.counts(System.currentTimeMillis()).rejected()).isEqualTo(2);
  }

  @Test
  @DisplayName("without encryption keys in the key file: the adapter says once that bodies are passed on as the server"
      + " has them, and an encrypted message reaches the handler exactly as the hub served it")
  void withoutKeysPassesOn(@TempDir Path dir) throws Exception {
    TestServer server = world.server("s1", HUB);
    TestUser alice = world.user("alice", server);
    TestUser bob = world.user("bob", server);
    List<JsonNode> handled = new CopyOnWriteArrayList<>();
    try (LogCapture log = LogCapture.of(HubAdapter.class.getName(), Level.INFO)) {
      start(server, bob.key().withEncryptionKeys(List.of()), Inbox.open(dir.resolve("inbox.db").toString()), handled,
          new ConcurrentHashMap<>());

      ShineClient aliceSession = world.session(alice, server);
      ShineClient.SignedPair secret = sealedPair(alice, bob, "meet at noon",
          bob.key().encryptionKey().orElseThrow().publicKey());
      aliceSession.sendPair(secret).await();
      String plain = aliceSession.sendText("alice", alice.key(), "bob", "hello").await().get("baseKey").asText();

      Eventually.until("both messages handled", 20_000, () -> handledMessage(handled, secret.incoming().baseKey())
          != null && handledMessage(handled, plain) != null);
      for (String baseKey : List.of(secret.incoming().baseKey(), plain)) {
        JsonNode passed = handledMessage(handled, baseKey);
        String served = world.sql(server).rows("SELECT body FROM hub_queue WHERE event_key = $1",
            passed.get("eventKey").asText()).iterator().next().getString(0);
        assertThat(passed).as("handed on as the hub served it").isEqualTo(Json.MAPPER.readTree(served));
      }
      assertThat(handledMessage(handled, secret.incoming().baseKey()).at("/payload/blobB64").asText()).isEqualTo(
          Base64.getEncoder().encodeToString(secret.incoming().bytes()));
      assertThat(log.text().split(Pattern.quote(HubAdapter.PASSED_ON_UNTOUCHED), -1)).as(log.text()).hasSize(2);
    }
  }

  private void start(TestServer server, KeyFile key, Inbox inbox, List<JsonNode> handled,
      Map<String, AtomicInteger> commits) throws Exception {
    HubAdapter adapter = new HubAdapter(new HubAdapter.Settings("http://127.0.0.1:" + server.port(), null, "bob", key,
        1, List.of(100L), 2_000, 50, Duration.ZERO), inbox, handled::add, eventKey -> {
          commits.computeIfAbsent(eventKey, k -> new AtomicInteger()).incrementAndGet();
          return false;
        });
    adapter.start();
    adapters.add(adapter);
  }

  /** A pair from {@code from} whose incoming copy is sealed to {@code recipientKey}, the outgoing to the sender's own. */
  private static ShineClient.SignedPair sealedPair(TestUser from, TestUser to, String text, byte[] recipientKey) {
    long createdAtMs = System.currentTimeMillis();
    long nonce = ShineClient.randomNonce();
    String baseKey = from.login() + "|" + to.login() + "|" + createdAtMs + "|" + nonce;
    byte[] body = MessageBody.encode(text);
    DmContainer incoming = DmCodec.sign(DmKind.INCOMING, createdAtMs, nonce, 0, from.login(), to.login(), "",
        BodyCipher.sealBody(body, recipientKey, baseKey, DmKind.INCOMING, 0), from.key().privateKey());
    DmContainer outgoing = DmCodec.sign(DmKind.OUTGOING, createdAtMs, nonce, 0, from.login(), to.login(), "",
        BodyCipher.sealBody(body, from.key().encryptionKey().orElseThrow().publicKey(), baseKey, DmKind.OUTGOING, 0),
        from.key().privateKey());
    return new ShineClient.SignedPair(incoming, outgoing);
  }

  /** The handled message event of {@code baseKey}, or null. */
  private static JsonNode handledMessage(List<JsonNode> handled, String baseKey) {
    return handled.stream().filter(e -> e.get("op").asText().equals("IncomingDirectMessage")
        && e.at("/payload/baseKey").asText().equals(baseKey)).findFirst().orElse(null);
  }

  /** A listing of the inbox, for a wait condition. */
  private interface Listing {
    List<Inbox.Row> rows() throws SQLException;
  }

  private static List<Inbox.Row> rows(Listing listing) {
    try {
      return listing.rows();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
