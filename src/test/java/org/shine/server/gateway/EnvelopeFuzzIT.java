package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shine.server.support.FuzzServer.abbreviate;
import static org.shine.server.support.FuzzServer.await;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.support.FuzzJson;
import org.shine.server.support.FuzzServer;
import org.shine.server.support.FuzzTries;
import org.shine.server.support.TestUser;
import org.shine.server.util.Json;

/**
 * Property-based tests of the §2 envelope as the gateway reads it (GatewayVerticle, OpDispatcher and the handlers,
 * Frames, Fields), against one real server: valid requests of every op, freshly signed, then mutated (fields
 * removed, added, renamed, their types swapped, huge numbers, deep nesting, odd Unicode) or cut as text. Every
 * frame gets an answer below 500, a refused one stores nothing, and the session answers a valid op afterwards.
 */
@AddLifecycleHook(FuzzTries.class)
class EnvelopeFuzzIT {
  /** Frames this large are cut by the WebSocket layer, which closes the session (PROTOCOL §2): not fuzzed here. */
  private static final int CLOSING_FRAME_BYTES = 4 * 262_144;
  /** PROTOCOL §3's baseKey as the server writes it: logins, then createdAtMs and nonce in plain decimal. */
  private static final String CANONICAL_BASE_KEY =
      "[a-z0-9_.-]{1,32}\\|[a-z0-9_.-]{1,32}\\|(0|[1-9][0-9]{0,18})\\|(0|[1-9][0-9]{0,18})";
  private static final int SETTINGS_PER_USER = 20;
  private static FuzzServer fuzz;
  private static ShineClient settingsSession;
  private static long settingsTries;
  private static TestUser alice;
  private static TestUser bob;
  private static ShineClient aliceSession;
  private static ShineClient anonymous;
  /** bob's message to alice (for receipts) and alice's message to bob (for tombstones and status queries). */
  private static SignedPair fromBob;
  private static SignedPair toBob;

  /** A valid request of a logged-in user, built fresh (new nonce, new signature) for each try. */
  enum UserRequest {
    SEND_PAIR, HISTORY, READ_RECEIPT, DELETE, SET_SETTING, GET_SETTINGS, MARK_UNSYNCED, GET_CARD
  }

  /** A valid request of an anonymous connection (server ops and the open ops). */
  enum OpenRequest {
    RECEIVE_INCOMING, RECEIVE_OUTCOMING, DELIVERY_STATUS, DM_SYNC, SETTINGS_SYNC, AUTH_CHALLENGE,
    SERVER_AUTH_CHALLENGE, GET_CARD
  }

  @BeforeContainer
  static void start() {
    fuzz = FuzzServer.start();
    alice = TestUser.create("alice").registerOn(fuzz.vertx, fuzz.server);
    bob = TestUser.create("bob").registerOn(fuzz.vertx, fuzz.server);
    aliceSession = alice.session(fuzz.vertx, fuzz.server);
    anonymous = await(ShineClient.connect(fuzz.vertx, fuzz.server.url()));
    ShineClient bobSession = bob.session(fuzz.vertx, fuzz.server);
    fromBob = pair(bob, "alice");
    await(bobSession.sendPair(fromBob));
    await(bobSession.close());
    toBob = pair(alice, "bob");
    await(aliceSession.sendPair(toBob));
  }

  @AfterContainer
  static void stop() {
    await(aliceSession.close().otherwiseEmpty());
    await(anonymous.close().otherwiseEmpty());
    if (settingsSession != null) {
      await(settingsSession.close().otherwiseEmpty());
    }
    fuzz.close();
  }

  @Property(tries = 300)
  @Label("a logged-in user's mutated requests: answered below 500, nothing stored when refused, session goes on")
  void mutatedUserRequests(@ForAll UserRequest request, @ForAll("mutations") List<FuzzJson.Mutation> mutations,
      @ForAll boolean payloadOnly) throws JsonProcessingException {
    String text = FuzzJson.text(mutate(frame(request), mutations, payloadOnly));
    JsonNode answer = assertSurvives(aliceSession, text);
    if (request == UserRequest.SET_SETTING && answer.path("status").asInt() == 200) {
      JsonNode sent = Json.MAPPER.readTree(text).get("payload");
      JsonNode settings = await(aliceSession.request("GetUserSettings", ShineClient.object())).get("settings");
      assertThat(settings.get(sent.get("key").asText())).as("the setting stored by %s", abbreviate(text))
          .isEqualTo(sent.get("value"));
    }
  }

  @Property(tries = 300)
  @Label("a setting with an odd key and any odd JSON value: refused, or stored and served back exactly as sent")
  void oddSettings(@ForAll("settingKeys") String key, @ForAll("settingValues") JsonNode value)
      throws JsonProcessingException {
    ObjectNode payload = ShineClient.object().put("key", key);
    payload.set("value", value);
    String text = FuzzJson.text(envelope("SetUserSetting", payload));
    ShineClient session = settingsSession();
    JsonNode answer = assertSurvives(session, text);
    if (answer.path("status").asInt() == 200) {
      JsonNode sent = Json.MAPPER.readTree(text).get("payload");
      JsonNode settings = await(session.request("GetUserSettings", ShineClient.object())).get("settings");
      assertThat(settings.get(sent.get("key").asText())).as("the setting stored by %s", abbreviate(text))
          .isEqualTo(sent.get("value"));
    }
  }

  @Property(tries = 300)
  @Label("mutated server ops and open ops on an anonymous connection: the same, and it stays anonymous")
  void mutatedOpenRequests(@ForAll OpenRequest request, @ForAll("mutations") List<FuzzJson.Mutation> mutations,
      @ForAll boolean payloadOnly) {
    String text = FuzzJson.text(mutate(frame(request), mutations, payloadOnly));
    assertSurvives(anonymous, text);
    assertThat(anonymous.request("GetUserSettings", ShineClient.object()).otherwise(e -> null)
        .await()).as("an anonymous connection stays anonymous").isNull();
  }

  @Property(tries = 300)
  @Label("a valid request cut, spliced or with a character inserted as text: answered below 500")
  void mangledText(@ForAll UserRequest request, @ForAll("textEdits") List<TextEdit> edits) {
    String text = FuzzJson.text(frame(request));
    for (TextEdit edit : edits) {
      text = edit.apply(text);
    }
    assertSurvives(aliceSession, text);
  }

  @Property(tries = 300)
  @Label("validly signed containers with edge-case fields, in every op that takes one: answered below 500")
  void signedOddContainers(@ForAll ContainerOp op, @ForAll("oddContainers") OddContainer first,
      @ForAll("oddContainers") OddContainer second, @ForAll boolean samePair, @ForAll boolean asTheOpExpects) {
    OddContainer main = asTheOpExpects ? first.forOp(op.kind()) : first;
    DmContainer one = main.sign();
    DmContainer other = samePair ? main.counterpart().sign() : second.sign();
    ObjectNode frame = switch (op) {
      case SEND_PAIR -> envelope("SendMessagePair", ShineClient.object().put("incomingBlobB64", b64(one))
          .put("outgoingBlobB64", b64(other)));
      case READ_RECEIPT -> envelope("SendReadReceipt", ShineClient.object().put("receiptBlobB64", b64(one)));
      case DELETE -> envelope("DeleteMessage", ShineClient.object().put("tombstoneBlobB64", b64(one)));
      case RECEIVE_INCOMING -> envelope("ReceiveIncomingMessage", ShineClient.object()
          .put("incomingBlobB64", b64(one)));
      case RECEIVE_OUTCOMING -> envelope("ReceiveOutcomingMessage", ShineClient.object()
          .put("incomingBlobB64", b64(one)).put("outgoingBlobB64", b64(other)));
    };
    JsonNode answer = assertSurvives(op.open() ? anonymous : aliceSession, FuzzJson.text(frame));
    if (answer.path("status").asInt() == 200 && (one.kind() == DmKind.READ_RECEIPT
        || one.kind() == DmKind.TOMBSTONE)) {
      assertThat(one.ref()).as("the ref of a stored %s", one.kind())
          .matches(one.kind() == DmKind.READ_RECEIPT ? CANONICAL_BASE_KEY : CANONICAL_BASE_KEY + "\\|[1-4]");
    }
  }

  /** The ops that carry containers. */
  enum ContainerOp {
    SEND_PAIR, READ_RECEIPT, DELETE, RECEIVE_INCOMING, RECEIVE_OUTCOMING;

    boolean open() {
      return this == RECEIVE_INCOMING || this == RECEIVE_OUTCOMING;
    }

    /** The kind the op expects first. */
    DmKind kind() {
      return switch (this) {
        case SEND_PAIR, RECEIVE_INCOMING, RECEIVE_OUTCOMING -> DmKind.INCOMING;
        case READ_RECEIPT -> DmKind.READ_RECEIPT;
        case DELETE -> DmKind.TOMBSTONE;
      };
    }
  }

  /** The fields of a container that is signed correctly by its author, each drawn from edge cases. */
  record OddContainer(TestUser author, DmKind kind, long createdAtMs, long nonce, long revision, String to,
      String ref, byte[] body) {
    DmContainer sign() {
      return DmCodec.sign(kind, createdAtMs, nonce, revision, author.login(), to, ref, body, author.key().privateKey());
    }

    /** Kinds 1 and 2 carry no ref (a few keep theirs, so that the codec's refusal is tried too). */
    OddContainer {
      if ((kind == DmKind.INCOMING || kind == DmKind.OUTGOING) && body.length % 7 != 3) {
        ref = "";
      }
    }

    /** As the op expects it: its kind, from alice (the session) to bob; the other fields stay odd. */
    OddContainer forOp(DmKind other) {
      return new OddContainer(alice, other, createdAtMs, nonce, revision, "bob", ref, body);
    }

    /** The other copy of the same pair (kind 1 for 2 and 2 for anything else). */
    OddContainer counterpart() {
      DmKind other = kind == DmKind.OUTGOING ? DmKind.INCOMING : DmKind.OUTGOING;
      return new OddContainer(author, other, createdAtMs, nonce, revision, to, "", body);
    }
  }

  /** One edit of a frame's text; {@code position} is taken modulo its length. */
  record TextEdit(int kind, int position, String insert) {
    String apply(String text) {
      int at = text.isEmpty() ? 0 : Math.floorMod(position, text.length());
      return switch (Math.floorMod(kind, 5)) {
        case 0 -> text.substring(0, at);
        case 1 -> text.substring(0, at) + insert + text.substring(at);
        case 2 -> text.substring(0, at) + text.substring(Math.min(text.length(), at + 1 + insert.length()));
        case 3 -> text.substring(0, at) + text.substring(at, Math.min(text.length(), at + 40)).repeat(2)
            + text.substring(Math.min(text.length(), at + 40));
        default -> text + insert;
      };
    }
  }

  /**
   * The session oddSettings writes on: another new user every {@value #SETTINGS_PER_USER} tries, so that a user's
   * settings stay well within its quotas (PROTOCOL §13) and the check reads them back from one GetUserSettings page.
   */
  private static ShineClient settingsSession() {
    if (settingsTries++ % SETTINGS_PER_USER == 0) {
      if (settingsSession != null) {
        await(settingsSession.close().otherwiseEmpty());
      }
      TestUser user = TestUser.create("set" + settingsTries).registerOn(fuzz.vertx, fuzz.server);
      settingsSession = user.session(fuzz.vertx, fuzz.server);
    }
    return settingsSession;
  }

  /** Sends one hostile frame and checks the answer, the stored rows and that the session still works. */
  private static JsonNode assertSurvives(ShineClient session, String text) {
    Assume.that(FuzzServer.utf8Bytes(text) < CLOSING_FRAME_BYTES);
    Map<String, Long> before = fuzz.rows();
    JsonNode answer = fuzz.exchange(session, text);
    FuzzServer.assertAnswered(answer, text);
    Statistics.label("answers").collect(answer.path("status").asInt() + " " + answer.at("/error/code").asText());
    if (answer.path("status").asInt() != 200) {
      assertThat(fuzz.rows()).as("rows after %s -> %s", abbreviate(text), abbreviate(answer.toString()))
          .isEqualTo(before);
    }
    JsonNode card = await(session.request("GetUserCard", ShineClient.object().put("login", "bob")));
    assertThat(card.at("/card/login").asText()).as("the session answers a valid op afterwards").isEqualTo("bob");
    fuzz.assertNoErrorLogged(text);
    return answer;
  }

  private static ObjectNode frame(UserRequest request) {
    long now = fuzz.clock.millis();
    return switch (request) {
      case SEND_PAIR -> {
        SignedPair pair = pair(alice, "bob");
        yield envelope("SendMessagePair", ShineClient.object().put("incomingBlobB64", b64(pair.incoming()))
            .put("outgoingBlobB64", b64(pair.outgoing())));
      }
      case HISTORY -> envelope("GetDirectMessages", ShineClient.object().put("peer", "bob")
          .put("beforeCreatedAtMs", now + 1_000).put("limit", 10));
      case READ_RECEIPT -> envelope("SendReadReceipt", ShineClient.object().put("receiptBlobB64",
          b64(ShineClient.signReceipt("alice", alice.key(), "bob", fromBob.incoming().baseKey(), now))));
      case DELETE -> envelope("DeleteMessage", ShineClient.object().put("tombstoneBlobB64",
          b64(ShineClient.signTombstone("alice", alice.key(), "bob", toBob.outgoing().messageKey(), now))));
      case SET_SETTING -> {
        ObjectNode payload = ShineClient.object().put("key", "theme");
        payload.putObject("value").put("color", "dark").put("size", 12).putArray("recent").add("bob");
        yield envelope("SetUserSetting", payload);
      }
      case GET_SETTINGS -> envelope("GetUserSettings", ShineClient.object());
      case MARK_UNSYNCED -> envelope("MarkAllUserSettingsUnsynced", ShineClient.object());
      case GET_CARD -> envelope("GetUserCard", ShineClient.object().put("login", "alice"));
    };
  }

  private static ObjectNode frame(OpenRequest request) {
    return switch (request) {
      case RECEIVE_INCOMING -> envelope("ReceiveIncomingMessage", ShineClient.object()
          .put("incomingBlobB64", b64(pair(bob, "alice").incoming())).put("sourceServerLogin", "s9"));
      case RECEIVE_OUTCOMING -> {
        SignedPair pair = pair(alice, "bob");
        yield envelope("ReceiveOutcomingMessage", ShineClient.object().put("incomingBlobB64", b64(pair.incoming()))
            .put("outgoingBlobB64", b64(pair.outgoing())).put("sourceServerLogin", "s9"));
      }
      case DELIVERY_STATUS -> envelope("GetDmDeliveryStatus", ShineClient.object()
          .put("messageKey", toBob.outgoing().messageKey()));
      case DM_SYNC -> {
        ObjectNode payload = ShineClient.object().put("sourceServerLogin", "s2").put("limit", 10);
        payload.putArray("ackSyncIds").add(1).add(2);
        yield envelope("DmSyncBatch", payload);
      }
      case SETTINGS_SYNC -> {
        ObjectNode payload = ShineClient.object().put("sourceServerLogin", "s2").put("limit", 10);
        payload.putArray("ackSyncIds").add(3);
        yield envelope("UserSettingsSyncBatch", payload);
      }
      case AUTH_CHALLENGE -> envelope("AuthChallenge", ShineClient.object().put("login", "alice"));
      case SERVER_AUTH_CHALLENGE -> envelope("ServerAuthChallenge", ShineClient.object().put("serverLogin", "s2"));
      case GET_CARD -> envelope("GetUserCard", ShineClient.object().put("login", "alice"));
    };
  }

  private static ObjectNode envelope(String op, ObjectNode payload) {
    ObjectNode frame = ShineClient.object().put("op", op).put("requestId", "f-" + ShineClient.randomNonce());
    frame.set("payload", payload);
    return frame;
  }

  private static SignedPair pair(TestUser from, String to) {
    return ShineClient.signPair(from.login(), from.key(), to, fuzz.clock.millis(), ShineClient.randomNonce(), 0,
        ("fuzz " + to).getBytes(StandardCharsets.UTF_8));
  }

  private static String b64(DmContainer container) {
    return Base64.getEncoder().encodeToString(container.bytes());
  }

  /** Mutates the whole frame, or only inside its payload (so that more tries get past the envelope). */
  private static JsonNode mutate(ObjectNode frame, List<FuzzJson.Mutation> mutations, boolean payloadOnly) {
    if (!payloadOnly) {
      return FuzzJson.mutate(frame, mutations);
    }
    frame.set("payload", FuzzJson.mutate(frame.get("payload"), mutations));
    return frame;
  }

  @Provide
  Arbitrary<OddContainer> oddContainers() {
    long skew = fuzz.server.config().delivery().maxClockSkewMs();
    Arbitrary<Long> createdAtMs = Arbitraries.frequencyOf(
        Tuple.of(4, Arbitraries.create(fuzz.clock::millis)),
        Tuple.of(2, Arbitraries.of(-skew - 1, -skew, skew, skew + 1, -1L, 1L)
            .map(offset -> fuzz.clock.millis() + offset)),
        Tuple.of(1, Arbitraries.of(0L, 1L, Long.MAX_VALUE, Long.MAX_VALUE - skew)),
        Tuple.of(1, Arbitraries.longs().greaterOrEqual(0)));
    Arbitrary<Long> nonce = Arbitraries.oneOf(Arbitraries.of(0L, Long.MAX_VALUE), Arbitraries.longs().greaterOrEqual(0));
    Arbitrary<Long> revision = Arbitraries.oneOf(Arbitraries.of(0L, 0L, 0L, 1L, 0x7FFF_FFFFL, 0x8000_0000L,
        0xFFFF_FFFFL), Arbitraries.longs().between(0, 0xFFFF_FFFFL));
    Arbitrary<String> to = Arbitraries.of("bob", "bob", "alice", "carol", "s1", "0", "a.b-c_d");
    Arbitrary<String> ref = Arbitraries.frequencyOf(
        Tuple.of(3, Arbitraries.create(() -> fromBob.incoming().baseKey())),
        Tuple.of(3, Arbitraries.create(() -> toBob.outgoing().messageKey())),
        Tuple.of(2, Arbitraries.create(() -> toBob.outgoing().baseKey() + "|9")),
        Tuple.of(2, Arbitraries.of("bob|alice|\u0661\u0662|1", "bob|alice|1|1|", "|||",
            "bob|alice|99999999999999999999|1", "bob|alice|-1|1", "bob|alice|1|1\u0000", "alice|bob|1|1|2",
            "bob|alice|+1|1", "bob|alice|\uff11|\uff12", "BOB|alice|1|1", "bob|alice|01|1", "alice|bob|1|01|2")),
        Tuple.of(2, FuzzJson.oddString().filter(text -> text.getBytes(
            StandardCharsets.UTF_8).length <= 65_535)));
    Arbitrary<byte[]> body = Arbitraries.oneOf(Arbitraries.bytes().array(byte[].class).ofMaxSize(100),
        FuzzJson.oddString().map(text -> text.getBytes(StandardCharsets.UTF_8))
            .filter(bytes -> bytes.length <= 70_000));
    return Combinators.combine(Arbitraries.of(alice, alice, alice, bob),
        Arbitraries.of(DmKind.class), createdAtMs, nonce, revision, to, ref, body)
        .as((author, kind, created, n, rev, recipient, someRef, someBody) -> new OddContainer(author, kind, created,
            n, rev, recipient, someRef, someBody));
  }

  @Provide
  Arbitrary<String> settingKeys() {
    return Arbitraries.oneOf(Arbitraries.of("theme", "k"), FuzzJson.oddString()
        .map(key -> key.length() > 130 ? key.substring(0, 130) : key));
  }

  @Provide
  Arbitrary<JsonNode> settingValues() {
    return Arbitraries.oneOf(FuzzJson.oddValue(), FuzzJson.oddValue().list().ofMaxSize(4).map(values -> {
      ObjectNode object = ShineClient.object();
      for (int i = 0; i < values.size(); i++) {
        object.set(i % 2 == 0 ? "f" + i : values.get(i).asText("x"), values.get(i));
      }
      return object;
    }));
  }

  @Provide
  Arbitrary<List<FuzzJson.Mutation>> mutations() {
    return FuzzJson.mutations();
  }

  @Provide
  Arbitrary<List<TextEdit>> textEdits() {
    Arbitrary<String> inserts = Arbitraries.oneOf(FuzzJson.oddString().map(s -> s.length() > 200 ? s.substring(0, 200)
        : s), Arbitraries.of("{", "}", "[", "]", "\"", ",", ":", "\\", "\\u", "\\ud800", "\\u0000", "null", "1e999"));
    return Combinators.combine(Arbitraries.integers(), Arbitraries.integers(), inserts).as(TextEdit::new).list()
        .ofMinSize(1).ofMaxSize(3);
  }
}
