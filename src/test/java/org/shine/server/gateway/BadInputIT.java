package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.dm.KeyFile;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.client.ShineClientException;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.support.MutableClock;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/**
 * Every malformed or refused request gets its own status and error code, leaves the WebSocket session usable
 * (the next valid request on it succeeds) and stores nothing (PROTOCOL §2, §3, §5).
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class BadInputIT {
  private static final long WAIT_S = 20;
  private static final int DEFAULT_MAX_FRAME_BYTES = 262_144;
  private static final MutableClock CLOCK = MutableClock.now();
  private static TestWorld world;
  private static Vertx vertx;
  private static TestServer server;
  private static Pool sql;
  private static TestUser alice;
  private static TestUser bob;
  private static TestUser carol;
  /** A key that belongs to no registered user. */
  private static KeyFile mallory;
  private final List<ShineClient> sessions = new ArrayList<>();

  @BeforeAll
  static void startServer() {
    world = TestWorld.on(Vertx.vertx()).clock(CLOCK);
    vertx = world.vertx();
    server = world.server("s1");
    sql = world.sql(server).pool();
    alice = world.user("alice", server);
    bob = world.user("bob", server);
    // carol is known here, but her only access server is another one
    carol = world.user("carol", List.of(TestWorld.deadRoute()), server);
    mallory = KeyFile.generate("mallory");
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

  // ---- envelope ------------------------------------------------------------------------------------------

  @Test
  @DisplayName("a frame that is not JSON gets 400 BAD_JSON without a requestId, and the session goes on")
  void malformedJson() {
    ShineClient session = loggedIn(alice);
    Snapshot before = stored();

    for (String text : List.of("{\"op\":\"GetUserCard\",\"requestId\":\"r-1\",\"payload\":",
        "{op: GetUserCard, requestId: r-2}", "{\"op\":\"GetUserCard\",\"requestId\":\"r-3\"} trailing")) {
      JsonNode reply = rawReply(session, text);
      assertErrorFrame(reply, 400, ErrorCode.BAD_JSON, null);
    }

    assertThat(stored()).isEqualTo(before);
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("a JSON frame that is not an object gets 400 BAD_ENVELOPE without a requestId")
  void frameNotAnObject() {
    ShineClient session = loggedIn(alice);
    Snapshot before = stored();

    for (String text : List.of("[{\"op\":\"GetUserCard\",\"requestId\":\"r-1\"}]", "\"SendMessagePair\"", "42",
        "null")) {
      JsonNode reply = rawReply(session, text);
      assertErrorFrame(reply, 400, ErrorCode.BAD_ENVELOPE, null);
    }

    assertThat(stored()).isEqualTo(before);
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("a frame without a string op gets 400 BAD_ENVELOPE that echoes its requestId")
  void missingOp() {
    ShineClient session = loggedIn(alice);
    Snapshot before = stored();

    JsonNode missing = rawReply(session, "{\"requestId\":\"no-op\",\"payload\":{\"login\":\"bob\"}}");
    JsonNode numeric = rawReply(session, "{\"op\":7,\"requestId\":\"numeric-op\",\"payload\":{}}");

    assertErrorFrame(missing, 400, ErrorCode.BAD_ENVELOPE, "no-op");
    assertErrorFrame(numeric, 400, ErrorCode.BAD_ENVELOPE, "numeric-op");
    assertThat(stored()).isEqualTo(before);
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("a valid pair sent without a requestId is refused with 400 BAD_ENVELOPE and not stored")
  void missingRequestId() {
    ShineClient session = loggedIn(alice);
    SignedPair pair = pair(alice, "bob");
    Snapshot before = stored();
    ObjectNode frame = ShineClient.object().put("op", "SendMessagePair");
    frame.set("payload", pairPayload(pair.incoming().bytes(), pair.outgoing().bytes()));

    JsonNode reply = rawReply(session, frame.toString());

    assertErrorFrame(reply, 400, ErrorCode.BAD_ENVELOPE, null);
    assertThat(stored()).isEqualTo(before);
    assertThat(rowsOf(pair)).isZero();
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("an unknown envelope field gets 400 UNKNOWN_FIELD with the requestId, and the pair is not stored")
  void unknownEnvelopeField() {
    ShineClient session = loggedIn(alice);
    SignedPair pair = pair(alice, "bob");
    Snapshot before = stored();
    ObjectNode frame = ShineClient.object().put("op", "SendMessagePair").put("requestId", "extra-1");
    frame.set("payload", pairPayload(pair.incoming().bytes(), pair.outgoing().bytes()));
    frame.put("priority", 1);

    JsonNode reply = rawReply(session, frame.toString());

    assertErrorFrame(reply, 400, ErrorCode.UNKNOWN_FIELD, "extra-1");
    assertThat(stored()).isEqualTo(before);
    assertThat(rowsOf(pair)).isZero();
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("a payload that is not an object gets 400 BAD_ENVELOPE with the requestId")
  void payloadNotAnObject() {
    ShineClient session = loggedIn(alice);
    Snapshot before = stored();

    JsonNode array = rawReply(session, "{\"op\":\"SendMessagePair\",\"requestId\":\"p-1\",\"payload\":[\"AAAA\"]}");
    JsonNode text = rawReply(session, "{\"op\":\"GetUserCard\",\"requestId\":\"p-2\",\"payload\":\"alice\"}");
    JsonNode nul = rawReply(session, "{\"op\":\"GetUserCard\",\"requestId\":3,\"payload\":null}");

    assertErrorFrame(array, 400, ErrorCode.BAD_ENVELOPE, "p-1");
    assertErrorFrame(text, 400, ErrorCode.BAD_ENVELOPE, "p-2");
    assertErrorFrame(nul, 400, ErrorCode.BAD_ENVELOPE, "3");
    assertThat(nul.get("requestId").isNumber()).as("a numeric requestId is echoed as a number").isTrue();
    assertThat(stored()).isEqualTo(before);
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("an unknown op gets 400 UNKNOWN_OP that echoes the op and the requestId")
  void unknownOp() {
    ShineClient session = loggedIn(alice);
    Snapshot before = stored();

    JsonNode reply = rawReply(session, "{\"op\":\"SendMessagePairs\",\"requestId\":\"u-1\",\"payload\":{}}");

    assertErrorFrame(reply, 400, ErrorCode.UNKNOWN_OP, "u-1");
    assertThat(reply.get("op").asText()).isEqualTo("SendMessagePairs");
    assertRefused(session.request("DropAllMessages", ShineClient.object()), 400, ErrorCode.UNKNOWN_OP);
    assertThat(stored()).isEqualTo(before);
    assertStillSends(session, alice);
  }

  // ---- payload fields ------------------------------------------------------------------------------------

  @Test
  @DisplayName("a missing or null payload field gets 400 MISSING_FIELD")
  void missingPayloadField() {
    ShineClient session = loggedIn(alice);
    SignedPair pair = pair(alice, "bob");
    Snapshot before = stored();
    ObjectNode withoutOutgoing = ShineClient.object()
        .put("incomingBlobB64", b64(pair.incoming().bytes()));
    ObjectNode nullOutgoing = withoutOutgoing.deepCopy().putNull("outgoingBlobB64");

    assertRefused(session.request("SendMessagePair", withoutOutgoing), 400, ErrorCode.MISSING_FIELD);
    assertRefused(session.request("SendMessagePair", nullOutgoing), 400, ErrorCode.MISSING_FIELD);
    assertRefused(session.request("GetUserCard", ShineClient.object()), 400, ErrorCode.MISSING_FIELD);
    assertRefused(session.request("GetDirectMessages", ShineClient.object().put("limit", 10)), 400,
        ErrorCode.MISSING_FIELD);

    assertThat(stored()).isEqualTo(before);
    assertThat(rowsOf(pair)).isZero();
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("an extra payload field gets 400 UNKNOWN_FIELD, even next to a valid pair")
  void extraPayloadField() {
    ShineClient session = loggedIn(alice);
    SignedPair pair = pair(alice, "bob");
    Snapshot before = stored();

    assertRefused(session.request("SendMessagePair", pairPayload(pair.incoming().bytes(), pair.outgoing().bytes())
        .put("note", "urgent")), 400, ErrorCode.UNKNOWN_FIELD);
    assertRefused(session.request("GetUserCard", ShineClient.object().put("login", "bob").put("version", 1)), 400,
        ErrorCode.UNKNOWN_FIELD);

    assertThat(stored()).isEqualTo(before);
    assertThat(rowsOf(pair)).isZero();
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("a frame over 256 KiB gets 413 FRAME_TOO_LARGE (with its requestId when readable); one at the limit is served")
  void oversizedFrame() {
    ShineClient session = loggedIn(alice);
    SignedPair pair = pair(alice, "bob");
    Snapshot before = stored();
    ObjectNode sendFrame = ShineClient.object().put("op", "SendMessagePair").put("requestId", "big-1");
    sendFrame.set("payload", pairPayload(pair.incoming().bytes(), pair.outgoing().bytes()));
    String paddedSend = padTo(sendFrame.toString(), DEFAULT_MAX_FRAME_BYTES + 1);

    JsonNode readable = rawReply(session, paddedSend);
    JsonNode unreadable = rawReply(session, "x".repeat(DEFAULT_MAX_FRAME_BYTES + 10));

    assertErrorFrame(readable, 413, ErrorCode.FRAME_TOO_LARGE, "big-1");
    assertErrorFrame(unreadable, 413, ErrorCode.FRAME_TOO_LARGE, null);
    assertThat(stored()).isEqualTo(before);
    assertThat(rowsOf(pair)).isZero();
    // a frame of exactly the limit is an ordinary request
    JsonNode atLimit = rawReply(session, padTo(
        "{\"op\":\"GetUserCard\",\"requestId\":\"edge\",\"payload\":{\"login\":\"bob\"}}", DEFAULT_MAX_FRAME_BYTES));
    assertThat(atLimit.get("status").asInt()).isEqualTo(200);
    assertThat(atLimit.get("requestId").asText()).isEqualTo("edge");
    assertThat(atLimit.at("/payload/card/login").asText()).isEqualTo("bob");
    assertStillSends(session, alice);
  }

  // ---- SendMessagePair -----------------------------------------------------------------------------------

  @Test
  @DisplayName("a blob that is not padded standard base64 gets 400 BAD_BASE64")
  void badBase64() {
    ShineClient session = loggedIn(alice);
    SignedPair pair = pair(alice, "bob");
    String outgoing = b64(pair.outgoing().bytes());
    String incoming = b64(pair.incoming().bytes());
    Snapshot before = stored();

    // illegal characters, the URL-safe alphabet, a lone sextet before padding, missing padding
    for (String bad : List.of("@@@@", "ab-_", incoming.substring(0, incoming.length() - 4) + "A===",
        "QUJDQQ")) {
      ObjectNode payload = ShineClient.object().put("incomingBlobB64", bad).put("outgoingBlobB64", outgoing);
      assertRefused(session.request("SendMessagePair", payload), 400, ErrorCode.BAD_BASE64);
    }

    assertThat(stored()).isEqualTo(before);
    assertThat(rowsOf(pair)).isZero();
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("a container that does not parse exactly (truncated, trailing byte, bad magic, bad version) is 400 BAD_CONTAINER")
  void unparsableContainer() {
    ShineClient session = loggedIn(alice);
    SignedPair pair = pair(alice, "bob");
    byte[] good = pair.incoming().bytes();
    byte[] truncated = Arrays.copyOf(good, good.length - 1);
    byte[] trailing = Arrays.copyOf(good, good.length + 1);
    byte[] badMagic = good.clone();
    badMagic[0] = 's';
    byte[] badVersion = good.clone();
    badVersion[8] = 2;
    byte[] unknownKind = good.clone();
    unknownKind[9] = 9;
    Snapshot before = stored();

    for (byte[] broken : List.of(truncated, trailing, badMagic, badVersion, unknownKind, new byte[0])) {
      assertRefused(session.request("SendMessagePair", pairPayload(broken, pair.outgoing().bytes())), 400,
          ErrorCode.BAD_CONTAINER);
      assertRefused(session.request("SendMessagePair", pairPayload(pair.incoming().bytes(), broken)), 400,
          ErrorCode.BAD_CONTAINER);
    }

    assertThat(stored()).isEqualTo(before);
    assertThat(rowsOf(pair)).isZero();
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("copies of the wrong kinds (two outgoing, two incoming, swapped) are 400 WRONG_KIND")
  void wrongKinds() {
    ShineClient session = loggedIn(alice);
    SignedPair pair = pair(alice, "bob");
    byte[] in = pair.incoming().bytes();
    byte[] out = pair.outgoing().bytes();
    Snapshot before = stored();

    assertRefused(session.request("SendMessagePair", pairPayload(out, out)), 400, ErrorCode.WRONG_KIND);
    assertRefused(session.request("SendMessagePair", pairPayload(in, in)), 400, ErrorCode.WRONG_KIND);
    assertRefused(session.request("SendMessagePair", pairPayload(out, in)), 400, ErrorCode.WRONG_KIND);
    DmContainer receipt = DmCodec.sign(DmKind.READ_RECEIPT, CLOCK.millis(), ShineClient.randomNonce(), 0, "alice",
        "bob", "bob|alice|1|2", new byte[0], alice.key().privateKey());
    assertRefused(session.request("SendMessagePair", pairPayload(in, receipt.bytes())), 400, ErrorCode.WRONG_KIND);

    assertThat(stored()).isEqualTo(before);
    assertThat(rowsOf(pair)).isZero();
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("copies that disagree on nonce, revision, createdAtMs or recipient are 400 PAIR_MISMATCH")
  void pairMismatch() {
    ShineClient session = loggedIn(alice);
    long createdAt = CLOCK.millis();
    long nonce = ShineClient.randomNonce();
    byte[] body = utf8("mismatch");
    byte[] key = alice.key().privateKey();
    DmContainer incoming = DmCodec.sign(DmKind.INCOMING, createdAt, nonce, 0, "alice", "bob", "", body, key);
    List<DmContainer> disagreeing = List.of(
        DmCodec.sign(DmKind.OUTGOING, createdAt, nonce + 1, 0, "alice", "bob", "", body, key),
        DmCodec.sign(DmKind.OUTGOING, createdAt, nonce, 1, "alice", "bob", "", body, key),
        DmCodec.sign(DmKind.OUTGOING, createdAt + 1, nonce, 0, "alice", "bob", "", body, key),
        DmCodec.sign(DmKind.OUTGOING, createdAt, nonce, 0, "alice", "carol", "", body, key));
    Snapshot before = stored();

    for (DmContainer outgoing : disagreeing) {
      assertRefused(session.request("SendMessagePair", pairPayload(incoming.bytes(), outgoing.bytes())), 400,
          ErrorCode.PAIR_MISMATCH);
    }

    assertThat(stored()).isEqualTo(before);
    assertThat(count("SELECT count(*) FROM dm_message WHERE base_key = $1", incoming.baseKey())).isZero();
    for (DmContainer outgoing : disagreeing) {
      assertThat(count("SELECT count(*) FROM dm_message WHERE base_key = $1", outgoing.baseKey())).isZero();
    }
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("bob's session cannot send a pair authored and signed by alice: 403 FORBIDDEN_AUTHOR")
  void forbiddenAuthor() {
    ShineClient bobSession = loggedIn(bob);
    SignedPair alicePair = pair(alice, "bob");
    Snapshot before = stored();

    assertRefused(bobSession.sendPair(alicePair), 403, ErrorCode.FORBIDDEN_AUTHOR);

    assertThat(stored()).isEqualTo(before);
    assertThat(rowsOf(alicePair)).isZero();
    assertStillSends(bobSession, bob);
  }

  @Test
  @DisplayName("sending or reading history before AuthLogin is 401 NOT_AUTHENTICATED; logging in on that session then works")
  void notAuthenticated() {
    ShineClient session = anonymous();
    SignedPair pair = pair(alice, "bob");
    Snapshot before = stored();

    assertRefused(session.sendPair(pair), 401, ErrorCode.NOT_AUTHENTICATED);
    assertRefused(session.request("GetDirectMessages", ShineClient.object().put("peer", "bob")), 401,
        ErrorCode.NOT_AUTHENTICATED);

    assertThat(stored()).isEqualTo(before);
    assertThat(rowsOf(pair)).isZero();
    await(session.login("alice", alice.key()));
    assertThat(await(session.sendPair(pair)).get("deliveryState").asText()).isEqualTo("delivered");
    assertThat(rowsOf(pair)).isEqualTo(2);
  }

  @Test
  @DisplayName("a pair not signed by the author's registered key is 400 BAD_SIGNATURE, even if only one copy is bad")
  void badSignature() {
    ShineClient session = loggedIn(alice);
    long createdAt = CLOCK.millis();
    long nonce = ShineClient.randomNonce();
    byte[] body = utf8("forged");
    SignedPair forged = ShineClient.signPair("alice", mallory, "bob", createdAt, nonce, 0, body);
    SignedPair genuine = ShineClient.signPair("alice", alice.key(), "bob", createdAt, nonce, 0, body);
    byte[] tamperedBody = genuine.outgoing().bytes().clone();
    tamperedBody[tamperedBody.length - Ed25519Signer.SIGNATURE_SIZE - 1] ^= 1;
    Snapshot before = stored();

    assertRefused(session.sendPair(forged), 400, ErrorCode.BAD_SIGNATURE);
    assertRefused(session.request("SendMessagePair", pairPayload(forged.incoming().bytes(),
        genuine.outgoing().bytes())), 400, ErrorCode.BAD_SIGNATURE);
    assertRefused(session.request("SendMessagePair", pairPayload(genuine.incoming().bytes(),
        forged.outgoing().bytes())), 400, ErrorCode.BAD_SIGNATURE);
    assertRefused(session.request("SendMessagePair", pairPayload(genuine.incoming().bytes(), tamperedBody)), 400,
        ErrorCode.BAD_SIGNATURE);

    assertThat(stored()).isEqualTo(before);
    assertThat(rowsOf(genuine)).isZero();
    // the refused forgeries did not reserve the key: the genuine pair is accepted afterwards
    assertThat(await(session.sendPair(genuine)).get("deliveryState").asText()).isEqualTo("delivered");
    assertThat(rowsOf(genuine)).isEqualTo(2);
  }

  @Test
  @DisplayName("a pair to a login nobody registered is 404 USER_NOT_FOUND")
  void unknownRecipient() {
    ShineClient session = loggedIn(alice);
    SignedPair pair = pair(alice, "nobody");
    Snapshot before = stored();

    assertRefused(session.sendPair(pair), 404, ErrorCode.USER_NOT_FOUND);

    assertThat(stored()).isEqualTo(before);
    assertThat(rowsOf(pair)).isZero();
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("a pair addressed to its own author is 400 SELF_MESSAGE")
  void selfMessage() {
    ShineClient session = loggedIn(alice);
    SignedPair pair = pair(alice, "alice");
    Snapshot before = stored();

    assertRefused(session.sendPair(pair), 400, ErrorCode.SELF_MESSAGE);

    assertThat(stored()).isEqualTo(before);
    assertThat(rowsOf(pair)).isZero();
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("createdAtMs 11 minutes off the server clock either way is 400 CLOCK_SKEW; 9 minutes is accepted")
  void clockSkew() {
    ShineClient session = loggedIn(alice);
    long now = CLOCK.millis();
    SignedPair past = pairAt(alice, "bob", now - Duration.ofMinutes(11).toMillis());
    SignedPair future = pairAt(alice, "bob", now + Duration.ofMinutes(11).toMillis());
    Snapshot before = stored();

    assertRefused(session.sendPair(past), 400, ErrorCode.CLOCK_SKEW);
    assertRefused(session.sendPair(future), 400, ErrorCode.CLOCK_SKEW);

    assertThat(stored()).isEqualTo(before);
    assertThat(rowsOf(past)).isZero();
    assertThat(rowsOf(future)).isZero();
    SignedPair withinLimit = pairAt(alice, "bob", now - Duration.ofMinutes(9).toMillis());
    assertThat(await(session.sendPair(withinLimit)).get("deliveryState").asText()).isEqualTo("delivered");
    assertThat(rowsOf(withinLimit)).isEqualTo(2);
  }

  @Test
  @DisplayName("a container over 70 KiB, or with a body over 64 KiB, is 413 CONTAINER_TOO_LARGE; a 64 KiB body is fine")
  void containerTooLarge() {
    ShineClient session = loggedIn(alice);
    SignedPair small = pair(alice, "bob");
    SignedPair huge = pairWithBody(alice, "bob", new byte[70 * 1024]);
    SignedPair bodyOverLimit = pairWithBody(alice, "bob", new byte[64 * 1024 + 1]);
    assertThat(huge.outgoing().bytes().length).isGreaterThan(70 * 1024);
    assertThat(bodyOverLimit.outgoing().bytes().length).isLessThanOrEqualTo(70 * 1024);
    Snapshot before = stored();

    assertRefused(session.sendPair(huge), 413, ErrorCode.CONTAINER_TOO_LARGE);
    assertRefused(session.request("SendMessagePair", pairPayload(small.incoming().bytes(), huge.outgoing().bytes())),
        413, ErrorCode.CONTAINER_TOO_LARGE);
    assertRefused(session.sendPair(bodyOverLimit), 413, ErrorCode.CONTAINER_TOO_LARGE);

    assertThat(stored()).isEqualTo(before);
    assertThat(rowsOf(huge)).isZero();
    assertThat(rowsOf(bodyOverLimit)).isZero();
    SignedPair atLimit = pairWithBody(alice, "bob", new byte[64 * 1024]);
    assertThat(await(session.sendPair(atLimit)).get("deliveryState").asText()).isEqualTo("delivered");
    assertThat(rowsOf(atLimit)).isEqualTo(2);
  }

  @Test
  @DisplayName("a burst beyond the in-flight limit gets 429 for the excess, one response each, and only the 200s are stored")
  void tooManyInFlight() {
    try (TestWorld own = world.child()) {
      TestServer tight = own.server("s7", "{\"limits\":{\"maxInFlightPerConnection\":2}}");
      Pool tightSql = own.sql(tight).pool();
      TestUser dora = own.user("dora", tight);
      own.user("erin", tight);
      ShineClient session = own.session(dora, tight);
      Map<String, AtomicInteger> responsesPerRequest = new ConcurrentHashMap<>();
      session.onRawFrame(frame -> {
        if (frame.has("requestId")) {
          responsesPerRequest.computeIfAbsent(frame.get("requestId").asText(), id -> new AtomicInteger())
              .incrementAndGet();
        }
      });
      List<SignedPair> pairs = new ArrayList<>();
      List<Future<JsonNode>> sends = new ArrayList<>();

      // WHEN 40 sends leave without waiting for any answer
      for (int i = 0; i < 40; i++) {
        SignedPair pair = pair(dora, "erin");
        pairs.add(pair);
        sends.add(session.sendPair(pair));
      }
      awaitAll(sends);

      // THEN each got exactly one answer, 200 or 429, and the store holds exactly the accepted ones
      List<SignedPair> accepted = new ArrayList<>();
      List<SignedPair> refused = new ArrayList<>();
      for (int i = 0; i < sends.size(); i++) {
        Future<JsonNode> send = sends.get(i);
        if (send.succeeded()) {
          accepted.add(pairs.get(i));
        } else {
          assertThat(send.cause()).isInstanceOfSatisfying(ShineClientException.class, e -> {
            assertThat(e.status()).isEqualTo(429);
            assertThat(e.code()).isEqualTo(ErrorCode.TOO_MANY_IN_FLIGHT);
          });
          refused.add(pairs.get(i));
        }
      }
      assertThat(refused).isNotEmpty();
      assertThat(accepted).hasSizeGreaterThanOrEqualTo(2);
      for (SignedPair pair : accepted) {
        assertThat(rowsOf(tightSql, pair)).as("copies of accepted %s", pair.outgoing().baseKey()).isEqualTo(2);
        assertThat(count(tightSql, "SELECT count(*) FROM dm_delivery WHERE base_key = $1",
            pair.outgoing().baseKey())).isEqualTo(1);
      }
      for (SignedPair pair : refused) {
        assertThat(rowsOf(tightSql, pair)).as("copies of refused %s", pair.outgoing().baseKey()).isZero();
        assertThat(count(tightSql, "SELECT count(*) FROM sync_queue WHERE item_key = $1",
            pair.outgoing().baseKey())).isZero();
      }
      assertThat(count(tightSql, "SELECT count(*) FROM dm_delivery")).isEqualTo(accepted.size());
      // a refused pair goes through when retried on the same, now idle, session
      SignedPair retried = refused.get(0);
      assertThat(await(session.sendPair(retried)).get("deliveryState").asText()).isEqualTo("delivered");
      assertThat(rowsOf(tightSql, retried)).isEqualTo(2);
      assertThat(responsesPerRequest).hasSize(sends.size() + 1);
      assertThat(responsesPerRequest.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
    }
  }

  // ---- AuthLogin and history -----------------------------------------------------------------------------

  @Test
  @DisplayName("AuthLogin without a pending AuthChallenge for that login is 400 NO_CHALLENGE")
  void authLoginWithoutChallenge() {
    ShineClient session = anonymous();
    Snapshot before = stored();
    ObjectNode login = ShineClient.object().put("login", "alice").put("signatureB64", b64(new byte[64]));

    assertRefused(session.request("AuthLogin", login), 400, ErrorCode.NO_CHALLENGE);
    await(session.request("AuthChallenge", ShineClient.object().put("login", "bob")));
    assertRefused(session.request("AuthLogin", login), 400, ErrorCode.NO_CHALLENGE);

    assertThat(stored()).isEqualTo(before);
    assertRefused(session.sendPair(pair(alice, "bob")), 401, ErrorCode.NOT_AUTHENTICATED);
    assertThat(await(session.login("alice", alice.key())).get("login").asText()).isEqualTo("alice");
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("AuthLogin with a wrong signature is 401, burns the challenge and leaves the session logged out")
  void authLoginWrongSignature() {
    ShineClient session = anonymous();
    Snapshot before = stored();

    JsonNode challenge = await(session.request("AuthChallenge", ShineClient.object().put("login", "alice")));
    String challengeB64 = challenge.get("challengeB64").asText();
    assertThat(challenge.get("serverLogin").asText()).isEqualTo("s1");
    assertRefused(session.request("AuthLogin", authLogin("alice", mallory, "s1", challengeB64)), 401,
        ErrorCode.BAD_SIGNATURE);
    // the challenge was used up by the failed attempt: the right signature for it no longer logs in
    assertRefused(session.request("AuthLogin", authLogin("alice", alice.key(), "s1", challengeB64)), 400,
        ErrorCode.NO_CHALLENGE);
    // alice's own key over another server's name is no proof for this one
    String second = await(session.request("AuthChallenge", ShineClient.object().put("login", "alice")))
        .get("challengeB64").asText();
    assertRefused(session.request("AuthLogin", authLogin("alice", alice.key(), "s2", second)), 401,
        ErrorCode.BAD_SIGNATURE);

    assertThat(stored()).isEqualTo(before);
    assertRefused(session.sendPair(pair(alice, "bob")), 401, ErrorCode.NOT_AUTHENTICATED);
    assertThat(await(session.login("alice", alice.key())).get("login").asText()).isEqualTo("alice");
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("AuthLogin for a login without a card is 404 USER_NOT_FOUND")
  void authLoginUnknownUser() {
    ShineClient session = anonymous();
    Snapshot before = stored();

    assertRefused(session.login("ghost", mallory), 404, ErrorCode.USER_NOT_FOUND);

    assertThat(stored()).isEqualTo(before);
    assertRefused(session.request("GetUserCard", ShineClient.object().put("login", "ghost")), 404,
        ErrorCode.USER_NOT_FOUND);
    assertThat(await(session.login("alice", alice.key())).get("login").asText()).isEqualTo("alice");
    assertStillSends(session, alice);
  }

  @Test
  @DisplayName("AuthLogin for a user whose card does not list this server is 421 NOT_ACCESS_SERVER")
  void authLoginNotAccessServer() {
    ShineClient session = anonymous();
    Snapshot before = stored();

    assertRefused(session.login("carol", carol.key()), 421, ErrorCode.NOT_ACCESS_SERVER);

    assertThat(stored()).isEqualTo(before);
    assertRefused(session.sendPair(pair(carol, "alice")), 401, ErrorCode.NOT_AUTHENTICATED);
    assertThat(await(session.login("bob", bob.key())).get("login").asText()).isEqualTo("bob");
    assertStillSends(session, bob);
  }

  @Test
  @DisplayName("GetDirectMessages with a limit outside 1..200 is 400 INVALID_FIELD; 1 and 200 are served")
  void historyLimitOutOfRange() {
    ShineClient session = loggedIn(alice);
    Snapshot before = stored();

    JsonNodeFactory json = JsonNodeFactory.instance;
    for (JsonNode limit : List.of(json.numberNode(0), json.numberNode(201), json.numberNode(-1),
        json.textNode("10"), json.numberNode(2.5))) {
      ObjectNode payload = ShineClient.object().put("peer", "bob");
      payload.set("limit", limit);
      assertRefused(session.request("GetDirectMessages", payload), 400, ErrorCode.INVALID_FIELD);
    }

    assertThat(stored()).isEqualTo(before);
    // strictly newer than every pair the other tests sent, so it heads the history
    CLOCK.advance(Duration.ofSeconds(1));
    SignedPair latest = assertStillSends(session, alice);
    JsonNode one = await(session.request("GetDirectMessages", ShineClient.object().put("peer", "bob")
        .put("limit", 1)));
    JsonNode max = await(session.request("GetDirectMessages", ShineClient.object().put("peer", "bob")
        .put("limit", 200)));
    assertThat(one.get("messages").size()).isEqualTo(1);
    assertThat(one.at("/messages/0/messageKey").asText()).isEqualTo(latest.outgoing().messageKey());
    assertThat(max.get("messages").size()).isBetween(1, 200);
    assertThat(max.at("/messages/0/messageKey").asText()).isEqualTo(latest.outgoing().messageKey());
  }

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

  // ---- text the database cannot hold ---------------------------------------------------------------------

  /** Found by EnvelopeFuzzIT: the first frame was answered 500 (the driver wrote bytes that are not UTF-8), the second stored "?". */
  @Test
  @DisplayName("a string or name holding an unpaired surrogate escape gets 400 BAD_JSON and stores nothing; a pair is"
      + " a character like any other")
  void unpairedSurrogates() {
    ShineClient session = loggedIn(alice);
    Snapshot before = stored();
    List<String> frames = List.of(
        "{\"op\":\"SetUserSetting\",\"requestId\":\"s-0\",\"payload\":{\"key\":\"theme\",\"value\":{\"f0\":\"\\ud800\"}}}",
        "{\"op\":\"SetUserSetting\",\"requestId\":\"s-1\",\"payload\":{\"key\":\"theme\",\"value\":\"\\udc00\"}}",
        "{\"op\":\"SetUserSetting\",\"requestId\":\"s-2\",\"payload\":{\"key\":\"\\ud83d\",\"value\":1}}",
        "{\"op\":\"GetUserCard\",\"requestId\":\"s-3\",\"payload\":{\"login\":\"b\\udfffob\"}}");

    for (int i = 0; i < frames.size(); i++) {
      assertErrorFrame(rawReply(session, frames.get(i)), 400, ErrorCode.BAD_JSON, "s-" + i);
    }
    JsonNode badRequestId = rawReply(session, "{\"op\":\"GetUserSettings\",\"requestId\":\"\\ud800\"}");
    assertErrorFrame(badRequestId, 400, ErrorCode.BAD_JSON, null);
    // Jackson itself refuses one in a field name, before any requestId can be read
    JsonNode inName = rawReply(session,
        "{\"op\":\"SetUserSetting\",\"requestId\":\"s-4\",\"payload\":{\"key\":\"k\",\"value\":{\"a\\udfffb\":1}}}");
    assertErrorFrame(inName, 400, ErrorCode.BAD_JSON, null);

    assertThat(stored()).isEqualTo(before);
    assertThat(count("SELECT count(*) FROM user_setting WHERE owner = 'alice'")).isZero();
    JsonNode pair = rawReply(session,
        "{\"op\":\"SetUserSetting\",\"requestId\":\"s-5\",\"payload\":{\"key\":\"face\",\"value\":\"\\ud83d\\ude00\"}}");
    assertThat(pair.get("status").asInt()).as("%s", pair).isEqualTo(200);
    assertThat(await(session.request("GetUserSettings", ShineClient.object())).at("/settings/face").asText())
        .isEqualTo("\ud83d\ude00");
    assertStillSends(session, alice);
  }

  /** Found by EnvelopeFuzzIT: 1e999 was read as infinity and stored as the string "Infinity". */
  @Test
  @DisplayName("a setting value with a number beyond the range of a double gets 400 INVALID_FIELD")
  void settingNumberBeyondDouble() {
    ShineClient session = loggedIn(bob);

    for (String value : List.of("1e999", "[1, -1e999]", "{\"a\":{\"b\":2e400}}")) {
      JsonNode reply = rawReply(session, "{\"op\":\"SetUserSetting\",\"requestId\":\"n-1\",\"payload\":"
          + "{\"key\":\"n\",\"value\":" + value + "}}");
      assertErrorFrame(reply, 400, ErrorCode.INVALID_FIELD, "n-1");
    }

    assertThat(await(session.request("GetUserSettings", ShineClient.object())).get("settings").has("n")).isFalse();
    JsonNode exact = rawReply(session, "{\"op\":\"SetUserSetting\",\"requestId\":\"n-2\",\"payload\":"
        + "{\"key\":\"n\",\"value\":[1.5, 123456789012345678901234567890]}}");
    assertThat(exact.get("status").asInt()).as("%s", exact).isEqualTo(200);
    assertThat(await(session.request("GetUserSettings", ShineClient.object())).at("/settings/n").toString())
        .isEqualTo("[1.5,123456789012345678901234567890]");
  }

  /**
   * Found by EnvelopeFuzzIT: a value nested 61 levels deep was stored, and the GetUserSettings response, one level
   * deeper, was more than the client's reader takes, so the session never saw its answer.
   */
  @Test
  @DisplayName("a setting value nested deeper than 32 levels gets 400 INVALID_FIELD; 32 levels are stored and read")
  void settingNestedTooDeep() {
    ShineClient session = loggedIn(bob);

    JsonNode deep = rawReply(session, "{\"op\":\"SetUserSetting\",\"requestId\":\"d-1\",\"payload\":"
        + "{\"key\":\"deep\",\"value\":" + "[".repeat(33) + "]".repeat(33) + "}}");
    assertErrorFrame(deep, 400, ErrorCode.INVALID_FIELD, "d-1");
    JsonNode fits = rawReply(session, "{\"op\":\"SetUserSetting\",\"requestId\":\"d-2\",\"payload\":"
        + "{\"key\":\"deep\",\"value\":" + "{\"a\":".repeat(32) + "1" + "}".repeat(32) + "}}");
    assertThat(fits.get("status").asInt()).as("%s", fits).isEqualTo(200);

    assertThat(await(session.request("GetUserSettings", ShineClient.object())).at("/settings/deep"
        + "/a".repeat(32)).asInt()).isEqualTo(1);
  }

  // ---- helpers -------------------------------------------------------------------------------------------

  /** Row counts of every table a refused request must leave alone. */
  private record Snapshot(long cards, long routes, long messages, long deliveries, long syncItems) {
  }

  private static Snapshot stored() {
    Row row = await(sql.query("SELECT (SELECT count(*) FROM user_card), (SELECT count(*) FROM"
        + " user_access_servers_current), (SELECT count(*) FROM dm_message), (SELECT count(*) FROM dm_delivery),"
        + " (SELECT count(*) FROM sync_outbox) + (SELECT count(*) FROM sync_queue)").execute()).iterator().next();
    return new Snapshot(row.getLong(0), row.getLong(1), row.getLong(2), row.getLong(3), row.getLong(4));
  }

  /** Proves the session is alive and still logged in as {@code from}: a fresh pair is accepted and stored. */
  private static SignedPair assertStillSends(ShineClient session, TestUser from) {
    SignedPair pair = pair(from, from == alice ? "bob" : "alice");
    JsonNode result = await(session.sendPair(pair));
    assertThat(result.get("outgoingKey").asText()).isEqualTo(pair.outgoing().messageKey());
    assertThat(result.get("deliveryState").asText()).isEqualTo("delivered");
    assertThat(rowsOf(pair)).isEqualTo(2);
    return pair;
  }

  private static void assertRefused(Future<?> response, int status, String code) {
    assertThatThrownBy(() -> await(response)).isInstanceOfSatisfying(ShineClientException.class, e -> {
      assertThat(e.status()).as("status of [%s]", e.getMessage()).isEqualTo(status);
      assertThat(e.code()).as("code of [%s]", e.getMessage()).isEqualTo(code);
    });
  }

  private static void assertErrorFrame(JsonNode frame, int status, String code, String requestId) {
    assertThat(frame.get("status").asInt()).as("status of %s", frame).isEqualTo(status);
    assertThat(frame.at("/error/code").asText()).as("code of %s", frame).isEqualTo(code);
    assertThat(frame.at("/error/message").asText()).as("message of %s", frame).isNotBlank();
    assertThat(frame.has("payload")).isFalse();
    if (requestId == null) {
      assertThat(frame.has("requestId")).as("requestId of %s", frame).isFalse();
    } else {
      assertThat(frame.path("requestId").asText()).as("requestId of %s", frame).isEqualTo(requestId);
    }
  }

  /** Writes {@code text} as one frame and returns the next response or error frame on the session. */
  private static JsonNode rawReply(ShineClient session, String text) {
    Promise<JsonNode> reply = Promise.promise();
    session.onRawFrame(frame -> {
      if (frame.has("status")) {
        reply.tryComplete(frame);
      }
    });
    try {
      await(session.sendRaw(text));
      return await(reply.future());
    } finally {
      session.onRawFrame(frame -> { });
    }
  }

  /** Pads a JSON object with whitespace before its closing brace to exactly {@code bytes} bytes. */
  private static String padTo(String json, int bytes) {
    int length = json.getBytes(StandardCharsets.UTF_8).length;
    return json.substring(0, json.length() - 1) + " ".repeat(bytes - length) + "}";
  }

  private static ObjectNode pairPayload(byte[] incoming, byte[] outgoing) {
    return ShineClient.object().put("incomingBlobB64", b64(incoming)).put("outgoingBlobB64", b64(outgoing));
  }

  private static ObjectNode authLogin(String login, KeyFile key, String serverLogin, String challengeB64) {
    byte[] signature = Ed25519Signer.sign(key.privateKey(),
        ("SHiNE_AUTH|" + serverLogin + "|" + challengeB64).getBytes(StandardCharsets.UTF_8));
    return ShineClient.object().put("login", login).put("signatureB64", b64(signature));
  }

  private static SignedPair pair(TestUser from, String to) {
    return pairAt(from, to, CLOCK.millis());
  }

  private static SignedPair pairAt(TestUser from, String to, long createdAtMs) {
    return ShineClient.signPair(from.login(), from.key(), to, createdAtMs, ShineClient.randomNonce(), 0,
        utf8("hello " + to));
  }

  private static SignedPair pairWithBody(TestUser from, String to, byte[] body) {
    return ShineClient.signPair(from.login(), from.key(), to, CLOCK.millis(), ShineClient.randomNonce(), 0, body);
  }

  private static long rowsOf(SignedPair pair) {
    return rowsOf(sql, pair);
  }

  private static long rowsOf(Pool pool, SignedPair pair) {
    return count(pool, "SELECT count(*) FROM dm_message WHERE base_key = $1", pair.outgoing().baseKey());
  }

  private static long count(String sqlText, Object... params) {
    return count(sql, sqlText, params);
  }

  private static long count(Pool pool, String sqlText, Object... params) {
    return await(pool.preparedQuery(sqlText).execute(Tuple.from(params))).iterator().next().getLong(0);
  }

  private static void awaitAll(List<Future<JsonNode>> futures) {
    await(Future.join(new ArrayList<>(futures)).otherwiseEmpty());
  }

  private static <T> T await(Future<T> future) {
    try {
      return future.await(WAIT_S, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("no answer within " + WAIT_S + " s", e);
    }
  }

  private static String b64(byte[] bytes) {
    return Base64.getEncoder().encodeToString(bytes);
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
