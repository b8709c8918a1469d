package org.shine.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Checkpoint;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.client.ShineClientException;
import org.shine.server.support.MutableClock;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class SendMessagePairIT {
  private static TestWorld world;
  private static Vertx vertx;
  private static TestServer server;
  private static Pool sql;
  private static final MutableClock CLOCK = MutableClock.now();
  private static TestUser alice;
  private static TestUser bob;
  private static TestUser carol;

  @BeforeAll
  static void startServer() {
    world = TestWorld.on(Vertx.vertx()).clock(CLOCK);
    vertx = world.vertx();
    server = world.server("s1");
    sql = world.sql(server).pool();
    alice = world.user("alice", server);
    bob = world.user("bob", server);
    // carol's only access server is elsewhere: she is known here, but not served here
    carol = world.user("carol", List.of(TestWorld.deadRoute()), server);
  }

  @AfterAll
  static void stopServer() {
    world.close();
    vertx.close().await();
  }

  @Test
  @DisplayName("a pair to a same-server recipient is delivered at once and the recipient's session gets it")
  void sameServerDelivery(VertxTestContext ctx) {
    ShineClient bobSession = bob.session(vertx, server);
    ShineClient aliceSession = alice.session(vertx, server);
    SignedPair pair = pair(alice, "bob", "hi bob", 0);
    Checkpoint event = ctx.checkpoint();
    Checkpoint response = ctx.checkpoint();
    bobSession.onEvent(frame -> ctx.verify(() -> {
      assertThat(frame.get("op").asText()).isEqualTo("IncomingDirectMessage");
      JsonNode payload = frame.get("payload");
      assertThat(payload.get("messageKey").asText()).isEqualTo(pair.incoming().messageKey());
      assertThat(payload.get("baseKey").asText()).isEqualTo(pair.outgoing().baseKey());
      assertThat(Base64.getDecoder().decode(payload.get("blobB64").asText())).isEqualTo(pair.incoming().bytes());
      event.flag();
    }));
    aliceSession.sendPair(pair).onComplete(ctx.succeeding(result -> ctx.verify(() -> {
      String baseKey = pair.outgoing().baseKey();
      assertThat(result.get("baseKey").asText()).isEqualTo(baseKey);
      assertThat(result.get("incomingKey").asText()).isEqualTo(baseKey + "|1");
      assertThat(result.get("outgoingKey").asText()).isEqualTo(baseKey + "|2");
      assertThat(result.get("deliveryState").asText()).isEqualTo("delivered");
      response.flag();
    })));
  }

  @Test
  @DisplayName("history shows the sender's outgoing copy with its state and the recipient's incoming copy")
  void historyOfBothSides() {
    ShineClient aliceSession = alice.session(vertx, server);
    ShineClient bobSession = bob.session(vertx, server);
    SignedPair first = pair(alice, "bob", "first", 0);
    aliceSession.sendPair(first).await();
    CLOCK.advance(java.time.Duration.ofMillis(5));
    SignedPair later = pair(alice, "bob", "second", 0);
    aliceSession.sendPair(later).await();

    JsonNode sent = aliceSession.request("GetDirectMessages", ShineClient.object().put("peer", "bob")
        .put("limit", 200)).await().get("messages");
    JsonNode received = bobSession.request("GetDirectMessages", ShineClient.object().put("peer", "alice")
        .put("limit", 200)).await().get("messages");

    JsonNode newestSent = sent.get(0);
    assertThat(newestSent.get("messageKey").asText()).isEqualTo(later.outgoing().messageKey());
    assertThat(newestSent.get("direction").asText()).isEqualTo("outgoing");
    assertThat(newestSent.get("deliveryState").asText()).isEqualTo("delivered");
    assertThat(newestSent.get("revision").asLong()).isZero();
    assertThat(newestSent.get("read").asBoolean()).isFalse();
    assertThat(newestSent.get("deleted").asBoolean()).isFalse();
    assertThat(Base64.getDecoder().decode(newestSent.get("blobB64").asText())).isEqualTo(later.outgoing().bytes());
    JsonNode newestReceived = received.get(0);
    assertThat(newestReceived.get("messageKey").asText()).isEqualTo(later.incoming().messageKey());
    assertThat(newestReceived.get("direction").asText()).isEqualTo("incoming");
    assertThat(newestReceived.has("deliveryState")).isFalse();
    assertThat(keys(sent)).contains(first.outgoing().messageKey());
    assertThat(keys(received)).contains(first.incoming().messageKey());

    JsonNode olderPage = aliceSession.request("GetDirectMessages", ShineClient.object().put("peer", "bob")
        .put("beforeCreatedAtMs", later.outgoing().createdAtMs()).put("limit", 200)).await().get("messages");
    assertThat(keys(olderPage)).doesNotContain(later.outgoing().messageKey()).contains(first.outgoing().messageKey());
  }

  @Test
  @DisplayName("re-sending identical bytes is an ACK that adds no row, no sync item and no event")
  void identicalResendIsIdempotent() {
    ShineClient aliceSession = alice.session(vertx, server);
    ShineClient bobSession = bob.session(vertx, server);
    List<JsonNode> events = new CopyOnWriteArrayList<>();
    bobSession.onEvent(events::add);
    SignedPair pair = pair(alice, "bob", "once", 0);
    JsonNode first = aliceSession.sendPair(pair).await();
    long rowsBefore = count("SELECT count(*) FROM dm_message WHERE base_key = $1", pair.outgoing().baseKey());
    long queuedBefore = count("SELECT count(*) FROM sync_queue WHERE item_key = $1", pair.outgoing().baseKey());

    JsonNode again = aliceSession.sendPair(pair).await();
    aliceSession.request("GetUserCard", ShineClient.object().put("login", "bob")).await();
    bobSession.request("GetUserCard", ShineClient.object().put("login", "bob")).await();

    assertThat(again).isEqualTo(first);
    assertThat(rowsBefore).isEqualTo(2);
    assertThat(queuedBefore).as("one sync item per copy").isEqualTo(2);
    assertThat(count("SELECT count(*) FROM dm_message WHERE base_key = $1", pair.outgoing().baseKey())).isEqualTo(2);
    assertThat(count("SELECT count(*) FROM sync_queue WHERE item_key = $1", pair.outgoing().baseKey())).isEqualTo(2);
    assertThat(count("SELECT count(*) FROM dm_delivery WHERE base_key = $1", pair.outgoing().baseKey())).isEqualTo(1);
    assertThat(events).hasSize(1);
  }

  @Test
  @DisplayName("same keys and revision with different bytes is 409 and leaves the stored copy alone")
  void conflictingBytes() {
    ShineClient aliceSession = alice.session(vertx, server);
    long createdAt = CLOCK.millis();
    long nonce = ShineClient.randomNonce();
    SignedPair original = ShineClient.signPair("alice", alice.key(), "bob", createdAt, nonce, 0, utf8("original"));
    SignedPair forged = ShineClient.signPair("alice", alice.key(), "bob", createdAt, nonce, 0, utf8("changed"));
    aliceSession.sendPair(original).await();

    assertThatThrownBy(() -> aliceSession.sendPair(forged).await())
        .isInstanceOfSatisfying(ShineClientException.class, e -> {
          assertThat(e.status()).isEqualTo(409);
          assertThat(e.code()).isEqualTo("CONTENT_CONFLICT");
        });
    assertThat(storedBlob("alice", original.outgoing().baseKey())).isEqualTo(original.outgoing().bytes());
  }

  @Test
  @DisplayName("a higher revision replaces the stored copy on both sides; a lower one afterwards is ignored")
  void revisions() {
    ShineClient aliceSession = alice.session(vertx, server);
    long createdAt = CLOCK.millis();
    long nonce = ShineClient.randomNonce();
    SignedPair v0 = ShineClient.signPair("alice", alice.key(), "bob", createdAt, nonce, 0, utf8("v0"));
    SignedPair v1 = ShineClient.signPair("alice", alice.key(), "bob", createdAt, nonce, 1, utf8("v1 edited"));
    aliceSession.sendPair(v0).await();

    JsonNode edited = aliceSession.sendPair(v1).await();
    JsonNode stale = aliceSession.sendPair(v0).await();

    assertThat(edited.get("deliveryState").asText()).isEqualTo("delivered");
    assertThat(stale.get("outgoingKey").asText()).isEqualTo(v0.outgoing().messageKey());
    assertThat(storedBlob("alice", v0.outgoing().baseKey())).isEqualTo(v1.outgoing().bytes());
    assertThat(storedBlob("bob", v0.outgoing().baseKey())).isEqualTo(v1.incoming().bytes());
    assertThat(count("SELECT count(*) FROM dm_delivery WHERE base_key = $1", v0.outgoing().baseKey())).isEqualTo(2);
  }

  @Test
  @DisplayName("a recipient not served here stays accepted with its first attempt due, for the retry worker")
  void remoteRecipientStaysAccepted() {
    ShineClient aliceSession = alice.session(vertx, server);
    SignedPair pair = pair(alice, "carol", "to another server", 0);

    JsonNode result = aliceSession.sendPair(pair).await();

    assertThat(result.get("deliveryState").asText()).isEqualTo("accepted");
    assertThat(count("SELECT count(*) FROM dm_delivery WHERE base_key = $1 AND state = 'accepted'"
        + " AND next_attempt_at_ms IS NOT NULL", pair.outgoing().baseKey())).isEqualTo(1);
    assertThat(count("SELECT count(*) FROM dm_message WHERE base_key = $1", pair.outgoing().baseKey())).isEqualTo(1);
  }

  @Test
  @DisplayName("a failure inside the transaction leaves neither copy nor delivery row, and spares other sends")
  void atomicity() {
    ShineClient aliceSession = alice.session(vertx, server);
    SignedPair doomed = pair(alice, "bob", "doomed", 0);
    // GIVEN the sync queue insert fails for this one message, inside the same transaction as the copies
    sql.query("CREATE OR REPLACE FUNCTION fail_outbox() RETURNS trigger AS $$ BEGIN"
        + " IF NEW.item_key = '" + doomed.outgoing().baseKey() + "' THEN RAISE EXCEPTION 'injected failure'; END IF;"
        + " RETURN NEW; END $$ LANGUAGE plpgsql").execute().await();
    sql.query("CREATE TRIGGER fail_outbox BEFORE INSERT ON sync_queue FOR EACH ROW EXECUTE FUNCTION fail_outbox()")
        .execute().await();
    List<Future<JsonNode>> healthy = new ArrayList<>();
    Future<JsonNode> doomedSend;
    try {
      // WHEN it is sent together with healthy sends that may share its batch
      for (int i = 0; i < 20; i++) {
        healthy.add(aliceSession.sendPair(pair(alice, "bob", "healthy " + i, 0)));
      }
      doomedSend = aliceSession.sendPair(doomed);
      List<Future<JsonNode>> all = new ArrayList<>(healthy);
      all.add(doomedSend);
      Future.join(all).otherwiseEmpty().await(30, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError(e);
    } finally {
      sql.query("DROP TRIGGER fail_outbox ON sync_queue").execute().await();
    }
    // THEN it alone fails, nothing of it is stored, and a retry after the fault succeeds
    assertThat(doomedSend.failed()).isTrue();
    assertThat(((ShineClientException) doomedSend.cause()).status()).isEqualTo(500);
    assertThat(healthy).allMatch(Future::succeeded);
    String baseKey = doomed.outgoing().baseKey();
    assertThat(count("SELECT count(*) FROM dm_message WHERE base_key = $1", baseKey)).isZero();
    assertThat(count("SELECT count(*) FROM dm_delivery WHERE base_key = $1", baseKey)).isZero();
    assertThat(count("SELECT count(*) FROM sync_queue WHERE item_key = $1", baseKey)).isZero();
    assertThat(aliceSession.sendPair(doomed).await().get("deliveryState").asText()).isEqualTo("delivered");
    assertThat(count("SELECT count(*) FROM dm_message WHERE base_key = $1", baseKey)).isEqualTo(2);
  }

  private static SignedPair pair(TestUser from, String to, String text, long revision) {
    return ShineClient.signPair(from.login(), from.key(), to, CLOCK.millis(), ShineClient.randomNonce(), revision,
        utf8(text));
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static List<String> keys(JsonNode messages) {
    List<String> keys = new ArrayList<>();
    messages.forEach(m -> keys.add(m.get("messageKey").asText()));
    return keys;
  }

  private static long count(String sqlText, String param) {
    return sql.preparedQuery(sqlText).execute(Tuple.of(param)).await().iterator().next().getLong(0);
  }

  private static byte[] storedBlob(String owner, String baseKey) {
    return sql.preparedQuery("SELECT blob FROM dm_message WHERE owner = $1 AND base_key = $2")
        .execute(Tuple.of(owner, baseKey)).await().iterator().next().getBuffer(0).getBytes();
  }
}
