package org.shine.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
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
import org.shine.server.support.Sql;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/**
 * The v3 future bound (PROTOCOL §5): nothing is created in the future, whatever its revision or kind — at most the
 * skew ahead on client ops, twice the skew on server ops — while an identical repeat is still answered from what is
 * stored before any clock check. The server's clock is moved by hand; the skew is the default 10 min.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class FutureBoundIT {
  private static final long WAIT_S = 20;
  private static final long MINUTE = Duration.ofMinutes(1).toMillis();
  /** The attack of issue 16: a tombstone created in the year 144,683. */
  private static final long FAR_FUTURE = 1L << 52;
  private static final MutableClock CLOCK = MutableClock.now();
  private static TestWorld world;
  private static TestServer server;
  private static Sql sql;
  private static TestUser alice;
  private static TestUser bob;
  private static ShineClient aliceSession;
  private static ShineClient plain;

  @BeforeAll
  static void startServer() {
    world = TestWorld.on(Vertx.vertx()).clock(CLOCK);
    server = world.server("s1");
    sql = world.sql(server);
    alice = world.user("alice", server);
    bob = world.user("bob", server);
    aliceSession = world.session(alice, server);
    plain = world.anonymous(server);
  }

  @AfterAll
  static void stopServer() {
    Vertx vertx = world.vertx();
    world.close();
    vertx.close().await();
  }

  @Test
  @DisplayName("DeleteMessage refuses a tombstone of revision 1 created at 2^52 ms, and one of revision 0 eleven"
      + " minutes ahead, with 400 CLOCK_SKEW; nine minutes ahead is taken")
  void tombstonesOnClientOp() {
    SignedPair message = sent("delete me");
    String ref = message.outgoing().messageKey();
    DmContainer farFuture = tombstone(FAR_FUTURE, 1, ref);
    DmContainer ahead = tombstone(CLOCK.millis() + 11 * MINUTE, 0, ref);
    DmContainer within = tombstone(CLOCK.millis() + 9 * MINUTE, 1, ref);

    assertRefused(aliceSession.deleteMessage(farFuture), 400, ErrorCode.CLOCK_SKEW);
    assertRefused(aliceSession.deleteMessage(ahead), 400, ErrorCode.CLOCK_SKEW);
    assertThat(signals(ref)).isZero();
    assertThat(outboxItems(farFuture.messageKey())).isZero();

    assertThat(await(aliceSession.deleteMessage(within)).get("messageKey").asText()).isEqualTo(ref);
    assertThat(signals(ref)).isEqualTo(1);
  }

  @Test
  @DisplayName("SendMessagePair refuses an edit (revision 1) created eleven minutes ahead with 400 CLOCK_SKEW, while"
      + " an edit of a message created an hour ago is taken (the past bound is waived for revisions)")
  void editsOnClientOp() {
    SignedPair ahead = ShineClient.signPair("alice", alice.key(), "bob", CLOCK.millis() + 11 * MINUTE,
        ShineClient.randomNonce(), 1, utf8("from the future"));
    SignedPair old = ShineClient.signPair("alice", alice.key(), "bob", CLOCK.millis() - 60 * MINUTE,
        ShineClient.randomNonce(), 1, utf8("an old message, edited"));

    assertRefused(aliceSession.sendPair(ahead), 400, ErrorCode.CLOCK_SKEW);
    assertThat(copies(ahead.outgoing().baseKey())).isZero();
    assertThat(await(aliceSession.sendPair(old)).get("outgoingKey").asText()).isEqualTo(old.outgoing().messageKey());
  }

  @Test
  @DisplayName("ReceiveIncomingMessage and ReceiveOutcomingMessage take revision 1 nineteen minutes ahead (twice the"
      + " skew) and refuse it 21 minutes ahead, and refuse a tombstone at 2^52 ms, with 400 CLOCK_SKEW")
  void serverOps() {
    DmContainer within = DmCodec.sign(DmKind.INCOMING, CLOCK.millis() + 19 * MINUTE, ShineClient.randomNonce(), 1,
        "alice", "bob", "", utf8("nearly too early"), alice.key().privateKey());
    DmContainer beyond = DmCodec.sign(DmKind.INCOMING, CLOCK.millis() + 21 * MINUTE, ShineClient.randomNonce(), 1,
        "alice", "bob", "", utf8("too early"), alice.key().privateKey());
    SignedPair pairBeyond = ShineClient.signPair("alice", alice.key(), "bob", CLOCK.millis() + 21 * MINUTE,
        ShineClient.randomNonce(), 1, utf8("too early, both copies"));
    SignedPair message = sent("delete me by server op");
    DmContainer farFuture = tombstone(FAR_FUTURE, 1, message.outgoing().messageKey());

    assertThat(await(receiveIncoming(within)).get("messageKey").asText()).isEqualTo(within.messageKey());
    assertRefused(receiveIncoming(beyond), 400, ErrorCode.CLOCK_SKEW);
    assertRefused(plain.request("ReceiveOutcomingMessage", ShineClient.object()
        .put("incomingBlobB64", b64(pairBeyond.incoming())).put("outgoingBlobB64", b64(pairBeyond.outgoing()))),
        400, ErrorCode.CLOCK_SKEW);
    assertRefused(receiveIncoming(farFuture), 400, ErrorCode.CLOCK_SKEW);

    assertThat(copies(beyond.baseKey())).isZero();
    assertThat(copies(pairBeyond.outgoing().baseKey())).isZero();
    assertThat(signals(message.outgoing().messageKey())).isZero();
  }

  @Test
  @DisplayName("an identical repeat is answered from what is stored before the clock check: a tombstone and a pair"
      + " stored nine minutes ahead are a 200 again once the clock has gone back, a new one at that time is 400")
  void identicalRepeatBeforeClockCheck() {
    SignedPair message = sent("delete me twice");
    DmContainer tombstone = tombstone(CLOCK.millis() + 9 * MINUTE, 1, message.outgoing().messageKey());
    SignedPair edit = ShineClient.signPair("alice", alice.key(), "bob", CLOCK.millis() + 9 * MINUTE,
        ShineClient.randomNonce(), 1, utf8("stored ahead"));
    await(aliceSession.deleteMessage(tombstone));
    await(aliceSession.sendPair(edit));
    long syncItems = sql.count("SELECT (SELECT count(*) FROM sync_outbox) + (SELECT count(*) FROM sync_queue)");

    // WHEN the server's clock goes back five minutes: both are now 14 minutes ahead of it
    CLOCK.advance(Duration.ofMinutes(-5));
    try {
      // THEN the same bytes are ACKs answered from what is stored, storing nothing new
      assertThat(await(aliceSession.deleteMessage(tombstone)).get("messageKey").asText())
          .isEqualTo(message.outgoing().messageKey());
      assertThat(await(aliceSession.sendPair(edit)).get("outgoingKey").asText())
          .isEqualTo(edit.outgoing().messageKey());
      assertThat(sql.count("SELECT (SELECT count(*) FROM sync_outbox) + (SELECT count(*) FROM sync_queue)"))
          .isEqualTo(syncItems);
      // and a new container created at that time is refused
      DmContainer another = tombstone(tombstone.createdAtMs(), 1, sent("another").outgoing().messageKey());
      assertRefused(aliceSession.deleteMessage(another), 400, ErrorCode.CLOCK_SKEW);
    } finally {
      CLOCK.advance(Duration.ofMinutes(5));
    }
  }

  private SignedPair sent(String text) {
    SignedPair pair = ShineClient.signPair("alice", alice.key(), "bob", CLOCK.millis(), ShineClient.randomNonce(), 0,
        utf8(text));
    await(aliceSession.sendPair(pair));
    return pair;
  }

  private static DmContainer tombstone(long createdAtMs, long revision, String ref) {
    return DmCodec.sign(DmKind.TOMBSTONE, createdAtMs, ShineClient.randomNonce(), revision, "alice", "bob", ref,
        new byte[0], alice.key().privateKey());
  }

  private static Future<JsonNode> receiveIncoming(DmContainer container) {
    return plain.request("ReceiveIncomingMessage", ShineClient.object().put("incomingBlobB64", b64(container)));
  }

  /** Tombstones stored for the copy {@code ref}. */
  private static long signals(String ref) {
    return sql.count("SELECT count(*) FROM dm_signal WHERE ref = $1", ref);
  }

  private static long outboxItems(String signalKey) {
    return sql.count("SELECT count(*) FROM sync_outbox WHERE item_key = $1", signalKey);
  }

  private static long copies(String baseKey) {
    return sql.count("SELECT count(*) FROM dm_message WHERE base_key = $1", baseKey);
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
