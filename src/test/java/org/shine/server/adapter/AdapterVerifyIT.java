package org.shine.server.adapter;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
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
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.shine.server.client.ContainerVerifier;
import org.shine.server.client.MessageBody;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.KeyFile;
import org.shine.server.support.Eventually;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/**
 * The reference adapter verifies each event's container against its author's card, read from the hub's card route
 * (PROTOCOL §4 v3 "Hub adapter", §13 "Clients verify"); seed 004's two phases stay as they are: an event is committed
 * to the inbox and ACKed, then Phase 2 rejects what does not verify.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class AdapterVerifyIT {
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
  @DisplayName("a forged message and a forged read receipt end rejected with their reason, never reach the handler,"
      + " and are ACKed once; genuine ones, a read receipt with its receiptBlobB64 included, are handled")
  void forgedEventsRejected(Vertx vertx, @TempDir Path dir) throws Exception {
    TestServer server = world.server("s1", HUB);
    TestUser alice = world.user("alice", server);
    TestUser bob = world.user("bob", server);
    KeyFile mallory = KeyFile.generate("alice");
    Map<String, AtomicInteger> commits = new ConcurrentHashMap<>();
    List<JsonNode> handled = new CopyOnWriteArrayList<>();
    Inbox inbox = Inbox.open(dir.resolve("inbox.db").toString());
    HubAdapter adapter = new HubAdapter(new HubAdapter.Settings("http://127.0.0.1:" + server.port(), null,
        bob.login(), bob.key(), 1, List.of(100L), 2_000, 50, Duration.ZERO), inbox, handled::add,
        eventKey -> {
          commits.computeIfAbsent(eventKey, k -> new AtomicInteger()).incrementAndGet();
          return false;
        });
    adapter.start();
    adapters.add(adapter);

    // GIVEN genuine events: a message from alice, and her receipt for a message of bob's
    ShineClient aliceSession = world.session(alice, server);
    String hello = aliceSession.sendText("alice", alice.key(), "bob", "hello bob").await().get("baseKey").asText();
    String bobsMessage = world.session(bob, server).sendText("bob", bob.key(), "alice", "read me").await()
        .get("baseKey").asText();
    aliceSession.sendReadReceipt(ShineClient.signReceipt("alice", alice.key(), "bob", bobsMessage,
        System.currentTimeMillis())).await();

    // WHEN the server hands out a message and a receipt not signed by alice's key
    DmContainer forged = DmCodec.sign(DmKind.INCOMING, System.currentTimeMillis(), ShineClient.randomNonce(), 0,
        "alice", "bob", "", MessageBody.encode("send me your key"), mallory.privateKey());
    ObjectNode forgedPayload = Json.MAPPER.createObjectNode().put("messageKey", forged.messageKey())
        .put("baseKey", forged.baseKey()).put("blobB64", Base64.getEncoder().encodeToString(forged.bytes()));
    String forgedKey = enqueue(server, "IncomingDirectMessage", forged.messageKey() + "|r0", forgedPayload);
    DmContainer forgedReceipt = DmCodec.sign(DmKind.READ_RECEIPT, System.currentTimeMillis(), 7, 0, "alice", "bob",
        bobsMessage, new byte[0], mallory.privateKey());
    ObjectNode receiptPayload = Json.MAPPER.createObjectNode().put("baseKey", bobsMessage)
        .put("readerLogin", "alice").put("readAtMs", forgedReceipt.createdAtMs())
        .put("receiptBlobB64", Base64.getEncoder().encodeToString(forgedReceipt.bytes()));
    String forgedReceiptKey = enqueue(server, "DmReadReceipt", forgedReceipt.messageKey(), receiptPayload);

    // THEN both end rejected with the reason, and the handler saw only the genuine events
    Eventually.until("both forgeries rejected", 20_000, () -> rows(inbox::rejected).size() == 2);
    for (Inbox.Row row : inbox.rejected()) {
      assertThat(row.eventKey()).isIn(forgedKey, forgedReceiptKey);
      assertThat(row.lastError()).isEqualTo("signature does not match alice's key");
    }
    Eventually.until("the genuine message and receipt handled", 20_000, () -> handled.stream().anyMatch(e ->
        e.at("/payload/baseKey").asText().equals(hello)) && handled.stream().anyMatch(e ->
        e.get("op").asText().equals("DmReadReceipt")));
    JsonNode receipt = handled.stream().filter(e -> e.get("op").asText().equals("DmReadReceipt")).findFirst()
        .orElseThrow();
    assertThat(DmCodec.parse(Base64.getDecoder().decode(receipt.at("/payload/receiptBlobB64").asText())).ref())
        .as("the hub's DmReadReceipt carries the signed receipt").isEqualTo(bobsMessage);
    assertThat(handled).noneMatch(e -> e.get("eventKey").asText().equals(forgedKey)
        || e.get("eventKey").asText().equals(forgedReceiptKey));

    // each forgery was committed once and ACKed after its commit; nothing is handed out again
    Eventually.until("every event ACKed", 10_000, () -> world.sql(server).count(
        "SELECT count(*) FROM hub_queue WHERE login = 'bob' AND NOT acked") == 0);
    assertThat(commits.get(forgedKey).get()).isEqualTo(1);
    assertThat(commits.get(forgedReceiptKey).get()).isEqualTo(1);
    assertThat(inbox.counts(System.currentTimeMillis()).rejected()).isEqualTo(2);
  }

  @Test
  @DisplayName("an event whose author's card cannot be read now is retried at the delays, then dead, never rejected"
      + " and never handled; once the card can be read it is verified and handled")
  void uncheckedIsRetried(@TempDir Path dir) throws Exception {
    KeyFile alice = KeyFile.generate("alice");
    DmContainer message = DmCodec.sign(DmKind.INCOMING, 1_774_700_000_000L, 3, 0, "alice", "bob", "",
        MessageBody.encode("hi"), alice.privateKey());
    ObjectNode event = Json.MAPPER.createObjectNode().put("op", "IncomingDirectMessage").put("eventKey", "e1");
    event.putObject("payload").put("messageKey", message.messageKey()).put("baseKey", message.baseKey())
        .put("blobB64", Base64.getEncoder().encodeToString(message.bytes()));
    Inbox inbox = Inbox.open(dir.resolve("inbox.db").toString());
    inbox.store("e1", "1", event.toString(), System.currentTimeMillis());
    AtomicBoolean hubUp = new AtomicBoolean(false);
    List<JsonNode> handled = new CopyOnWriteArrayList<>();
    InboxProcessor processor = new InboxProcessor(inbox, handled::add, ContainerVerifier.inline("bob",
        login -> hubUp.get() ? Future.succeededFuture(Optional.of(ShineClient.signedCard("alice", alice,
            List.of(Map.entry("s1", "ws://127.0.0.1:7101/ws")), 1))) : Future.failedFuture("hub unreachable")),
        EventBodies.NONE, List.of(50L, 50L), 1_000);

    Eventually.until("dead after every delay", 10_000, () -> runOnce(processor) >= 0
        && rows(inbox::dead).size() == 1);
    assertThat(inbox.dead().get(0).attempts()).isEqualTo(3);
    assertThat(inbox.dead().get(0).lastError()).contains("not verified yet: alice's card could not be read");
    assertThat(inbox.rejected()).isEmpty();
    assertThat(handled).isEmpty();

    hubUp.set(true);
    inbox.retryDead(System.currentTimeMillis());
    Eventually.until("handled", 10_000, () -> runOnce(processor) >= 0 && handled.size() == 1);
    assertThat(inbox.all().get(0).status()).isEqualTo("done");
  }

  private String enqueue(TestServer server, String op, String key, ObjectNode payload) {
    return enqueue(world, server, op, key, payload);
  }

  /** Puts a hub event for bob straight into the server's queue, as a forging server would; answers its key. */
  static String enqueue(TestWorld world, TestServer server, String op, String key, ObjectNode payload) {
    String eventKey = op + "|" + key;
    ObjectNode body = Json.MAPPER.createObjectNode().put("op", op).put("eventKey", eventKey);
    body.set("payload", payload);
    // the next delivery id of bob's, taken as the server takes it (V6: a per-user sequence)
    assertThat(world.sql(server).rows("WITH next AS (UPDATE hub_subscriber SET last_delivery_id = last_delivery_id + 1"
        + " WHERE login = 'bob' RETURNING last_delivery_id) INSERT INTO hub_queue (login, delivery_id, event_key, body,"
        + " created_at_ms) SELECT 'bob', last_delivery_id, $1, $2, $3 FROM next", eventKey, body.toString(),
        System.currentTimeMillis()).rowCount()).isEqualTo(1);
    return eventKey;
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

  private static int runOnce(InboxProcessor processor) {
    try {
      return processor.runOnce();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
