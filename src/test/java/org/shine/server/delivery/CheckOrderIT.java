package org.shine.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.client.ShineClientException;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.support.MutableClock;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/**
 * The order of checks (PROTOCOL §5 v2, v3): an identical repeat is answered from the stored bytes before any other
 * check; the past bound of what a session sends applies to new messages (revision 0) only; server ops refuse only a
 * createdAtMs beyond twice the skew in the future (v3; {@link FutureBoundIT} holds the rest of the v3 future bound).
 * The server's clock is moved by hand; the skew is the default 10 min.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class CheckOrderIT {
  private static final long WAIT_S = 20;
  private static final Duration BEYOND_SKEW = Duration.ofMinutes(11);
  private static final long SERVER_OP_LATE_MS = Duration.ofMinutes(20).toMillis();
  /** Beyond twice the skew: the v3 future bound of server ops. */
  private static final long SERVER_OP_AHEAD_MS = Duration.ofMinutes(21).toMillis();
  private static final MutableClock CLOCK = MutableClock.now();
  private static TestWorld world;
  private static Vertx vertx;
  private static TestServer server;
  private static Pool sql;
  private static TestUser alice;
  private static TestUser bob;
  private final List<ShineClient> sessions = new ArrayList<>();

  @BeforeAll
  static void startServer() {
    world = TestWorld.on(Vertx.vertx()).clock(CLOCK);
    vertx = world.vertx();
    server = world.server("s1");
    sql = world.sql(server).pool();
    alice = world.user("alice", server);
    bob = world.user("bob", server);
  }

  @AfterAll
  static void stopServer() {
    world.close();
    vertx.close().await();
  }

  @AfterEach
  void closeSessions() {
    sessions.forEach(session -> await(session.close().otherwiseEmpty()));
  }

  // ---- what a session sends --------------------------------------------------------------------------------

  @Test
  @DisplayName("an identical SendMessagePair resent after the clock moved 11 minutes is still a 200 with its stored"
      + " state, and stores nothing new")
  void identicalResendAfterSkew() {
    ShineClient session = loggedIn(alice);
    SignedPair pair = pair(alice, "bob", CLOCK.millis(), 0, "first");
    assertThat(await(session.sendPair(pair)).get("deliveryState").asText()).isEqualTo("delivered");
    long syncItems = count("SELECT (SELECT count(*) FROM sync_outbox) + (SELECT count(*) FROM sync_queue)");

    // WHEN the same bytes come again 11 minutes later (a client retrying after a lost answer)
    CLOCK.advance(BEYOND_SKEW);
    JsonNode again = await(session.sendPair(pair));

    // THEN they are an ACK answered from what is stored
    assertThat(again.get("outgoingKey").asText()).isEqualTo(pair.outgoing().messageKey());
    assertThat(again.get("deliveryState").asText()).isEqualTo("delivered");
    assertThat(rowsOf(pair.outgoing().baseKey())).isEqualTo(2);
    assertThat(count("SELECT (SELECT count(*) FROM sync_outbox) + (SELECT count(*) FROM sync_queue)"))
        .isEqualTo(syncItems);
  }

  @Test
  @DisplayName("an edit (revision 1 with the original createdAtMs) 11 minutes later is accepted and replaces both"
      + " copies")
  void editAfterSkew() {
    ShineClient session = loggedIn(alice);
    long createdAt = CLOCK.millis();
    long nonce = ShineClient.randomNonce();
    SignedPair original = ShineClient.signPair("alice", alice.key(), "bob", createdAt, nonce, 0, utf8("typo"));
    await(session.sendPair(original));

    CLOCK.advance(BEYOND_SKEW);
    SignedPair edit = ShineClient.signPair("alice", alice.key(), "bob", createdAt, nonce, 1, utf8("fixed"));
    JsonNode edited = await(session.sendPair(edit));

    assertThat(edited.get("deliveryState").asText()).isEqualTo("delivered");
    Row aliceCopy = copy("alice", edit.outgoing().baseKey());
    assertThat(aliceCopy.getLong("revision")).isEqualTo(1);
    assertThat(aliceCopy.getBuffer("blob").getBytes()).isEqualTo(edit.outgoing().bytes());
    Row bobCopy = copy("bob", edit.outgoing().baseKey());
    assertThat(bobCopy.getLong("revision")).isEqualTo(1);
    assertThat(bobCopy.getBuffer("blob").getBytes()).isEqualTo(edit.incoming().bytes());
  }

  @Test
  @DisplayName("a new message whose createdAtMs is 11 minutes old, or 11 minutes ahead, is 400 CLOCK_SKEW and not"
      + " stored")
  void newMessageOutsideSkew() {
    ShineClient session = loggedIn(alice);
    SignedPair old = pair(alice, "bob", CLOCK.millis() - BEYOND_SKEW.toMillis(), 0, "too old");
    SignedPair ahead = pair(alice, "bob", CLOCK.millis() + BEYOND_SKEW.toMillis(), 0, "too new");

    assertRefused(session.sendPair(old), 400, ErrorCode.CLOCK_SKEW);
    assertRefused(session.sendPair(ahead), 400, ErrorCode.CLOCK_SKEW);

    assertThat(rowsOf(old.outgoing().baseKey())).isZero();
    assertThat(rowsOf(ahead.outgoing().baseKey())).isZero();
  }

  @Test
  @DisplayName("read receipts: an identical one resent 11 minutes later is a 200, a new one 11 minutes old is taken"
      + " (v3: no past bound), one 11 minutes ahead is 400 CLOCK_SKEW and not stored")
  void readReceipts() {
    ShineClient aliceSession = loggedIn(alice);
    ShineClient bobSession = loggedIn(bob);
    SignedPair first = pair(alice, "bob", CLOCK.millis(), 0, "read me");
    SignedPair second = pair(alice, "bob", CLOCK.millis(), 0, "read me too");
    await(aliceSession.sendPair(first));
    await(aliceSession.sendPair(second));
    DmContainer receipt = ShineClient.signReceipt("bob", bob.key(), "alice", first.outgoing().baseKey(),
        CLOCK.millis());
    await(bobSession.sendReadReceipt(receipt));

    CLOCK.advance(BEYOND_SKEW);
    JsonNode again = await(bobSession.sendReadReceipt(receipt));
    DmContainer late = ShineClient.signReceipt("bob", bob.key(), "alice", second.outgoing().baseKey(),
        CLOCK.millis() - BEYOND_SKEW.toMillis());
    DmContainer ahead = ShineClient.signReceipt("bob", bob.key(), "alice", first.outgoing().baseKey(),
        CLOCK.millis() + BEYOND_SKEW.toMillis());

    assertThat(again.get("receiptKey").asText()).isEqualTo(receipt.messageKey());
    assertThat(signalsOf(receipt.messageKey())).isEqualTo(2);
    assertThat(await(bobSession.sendReadReceipt(late)).get("receiptKey").asText()).isEqualTo(late.messageKey());
    assertThat(signalsOf(late.messageKey())).isEqualTo(2);
    assertRefused(bobSession.sendReadReceipt(ahead), 400, ErrorCode.CLOCK_SKEW);
    assertThat(signalsOf(ahead.messageKey())).isZero();
  }

  // ---- server ops --------------------------------------------------------------------------------------

  @Test
  @DisplayName("ReceiveIncomingMessage over a plain connection takes a copy created 20 minutes ago and refuses one"
      + " 21 minutes ahead with 400 CLOCK_SKEW, storing it nowhere")
  void receiveIncomingLateAndAhead() {
    ShineClient plain = anonymous();
    DmContainer late = incoming("alice", "bob", CLOCK.millis() - SERVER_OP_LATE_MS, "late");
    DmContainer ahead = incoming("alice", "bob", CLOCK.millis() + SERVER_OP_AHEAD_MS, "ahead");

    JsonNode accepted = await(receiveIncoming(plain, late));
    assertRefused(receiveIncoming(plain, ahead), 400, ErrorCode.CLOCK_SKEW);

    assertThat(accepted.get("messageKey").asText()).isEqualTo(late.messageKey());
    assertThat(rowsOf(late.baseKey())).isEqualTo(1);
    assertThat(rowsOf(ahead.baseKey())).isZero();
  }

  @Test
  @DisplayName("ReceiveOutcomingMessage over a plain connection takes a pair created 20 minutes ago and refuses one"
      + " 21 minutes ahead with 400 CLOCK_SKEW, storing it nowhere")
  void receiveOutgoingLateAndAhead() {
    ShineClient plain = anonymous();
    SignedPair late = pair(alice, "bob", CLOCK.millis() - SERVER_OP_LATE_MS, 0, "late pair");
    SignedPair ahead = pair(alice, "bob", CLOCK.millis() + SERVER_OP_AHEAD_MS, 0, "early pair");

    JsonNode accepted = await(receiveOutgoing(plain, late));
    assertRefused(receiveOutgoing(plain, ahead), 400, ErrorCode.CLOCK_SKEW);

    assertThat(accepted.get("outgoingKey").asText()).isEqualTo(late.outgoing().messageKey());
    assertThat(rowsOf(late.outgoing().baseKey())).isEqualTo(2);
    assertThat(rowsOf(ahead.outgoing().baseKey())).isZero();
    assertThat(count("SELECT count(*) FROM dm_delivery WHERE base_key = $1", ahead.outgoing().baseKey())).isZero();
  }

  @Test
  @DisplayName("a read receipt by ReceiveIncomingMessage follows the server-op rule: 20 minutes late is taken,"
      + " 21 minutes ahead is 400 CLOCK_SKEW")
  void receiptByServerOp() {
    ShineClient aliceSession = loggedIn(alice);
    SignedPair message = pair(alice, "bob", CLOCK.millis(), 0, "read me later");
    await(aliceSession.sendPair(message));
    ShineClient plain = anonymous();
    DmContainer late = ShineClient.signReceipt("bob", bob.key(), "alice", message.outgoing().baseKey(),
        CLOCK.millis() - SERVER_OP_LATE_MS);
    DmContainer ahead = ShineClient.signReceipt("bob", bob.key(), "alice", message.outgoing().baseKey(),
        CLOCK.millis() + SERVER_OP_AHEAD_MS);

    await(receiveIncoming(plain, late));
    assertRefused(receiveIncoming(plain, ahead), 400, ErrorCode.CLOCK_SKEW);

    assertThat(signalsOf(late.messageKey())).isEqualTo(1);
    assertThat(signalsOf(ahead.messageKey())).isZero();
  }

  @Test
  @DisplayName("ReceiveIncomingMessage of a kind-1 copy with from = to is 400 SELF_MESSAGE and stored nowhere")
  void selfMessageByServerOp() {
    ShineClient plain = anonymous();
    DmContainer self = incoming("bob", "bob", CLOCK.millis(), "note to self");

    assertRefused(receiveIncoming(plain, self), 400, ErrorCode.SELF_MESSAGE);

    assertThat(rowsOf(self.baseKey())).isZero();
    assertThat(count("SELECT count(*) FROM sync_queue WHERE item_key = $1", self.baseKey()))
        .isZero();
  }

  // ---- helpers -------------------------------------------------------------------------------------------

  private ShineClient loggedIn(TestUser user) {
    ShineClient session = user.session(vertx, server);
    sessions.add(session);
    return session;
  }

  private ShineClient anonymous() {
    ShineClient session = await(ShineClient.connect(vertx, server.url()));
    sessions.add(session);
    return session;
  }

  private static Future<JsonNode> receiveIncoming(ShineClient session, DmContainer container) {
    return session.request("ReceiveIncomingMessage", ShineClient.object().put("incomingBlobB64", b64(container)));
  }

  private static Future<JsonNode> receiveOutgoing(ShineClient session, SignedPair pair) {
    return session.request("ReceiveOutcomingMessage", ShineClient.object()
        .put("incomingBlobB64", b64(pair.incoming())).put("outgoingBlobB64", b64(pair.outgoing())));
  }

  private static SignedPair pair(TestUser from, String to, long createdAtMs, long revision, String text) {
    return ShineClient.signPair(from.login(), from.key(), to, createdAtMs, ShineClient.randomNonce(), revision,
        utf8(text));
  }

  private static DmContainer incoming(String from, String to, long createdAtMs, String text) {
    TestUser author = from.equals("alice") ? alice : bob;
    return DmCodec.sign(DmKind.INCOMING, createdAtMs, ShineClient.randomNonce(), 0, from, to, "", utf8(text),
        author.key().privateKey());
  }

  private static Row copy(String owner, String baseKey) {
    return await(sql.preparedQuery("SELECT revision, blob FROM dm_message WHERE owner = $1 AND base_key = $2")
        .execute(Tuple.of(owner, baseKey))).iterator().next();
  }

  private static long rowsOf(String baseKey) {
    return count("SELECT count(*) FROM dm_message WHERE base_key = $1", baseKey);
  }

  private static long signalsOf(String signalKey) {
    return count("SELECT count(*) FROM dm_signal WHERE signal_key = $1", signalKey);
  }

  private static long count(String sqlText, Object... params) {
    return await(sql.preparedQuery(sqlText).execute(Tuple.from(params))).iterator().next().getLong(0);
  }

  private static void assertRefused(Future<?> response, int status, String code) {
    assertThatThrownBy(() -> await(response)).isInstanceOfSatisfying(ShineClientException.class, e -> {
      assertThat(e.status()).as("status of [%s]", e.getMessage()).isEqualTo(status);
      assertThat(e.code()).as("code of [%s]", e.getMessage()).isEqualTo(code);
    });
  }

  private static <T> T await(Future<T> future) {
    try {
      return future.await(WAIT_S, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("no answer within " + WAIT_S + " s", e);
    }
  }

  private static String b64(DmContainer container) {
    return Base64.getEncoder().encodeToString(container.bytes());
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
