package org.shine.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.LocalRecordCodec;
import org.shine.server.client.ShineClient;
import org.shine.server.config.AppConfig;
import org.shine.server.config.ConfigLoader;
import org.shine.server.db.DeliveryRepository;
import org.shine.server.db.DmRepository;
import org.shine.server.db.Migrator;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.KeyFile;
import org.shine.server.dm.KeyRing;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.hub.HubSubscribers;
import org.shine.server.model.DeliverySchedule;
import org.shine.server.model.DeliveryState;
import org.shine.server.model.StoredUser;
import org.shine.server.model.UserCard;
import org.shine.server.peer.PeerCalls;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.ProtocolErrors;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.support.MutableClock;
import org.shine.server.support.TestDatabase;
import org.shine.server.util.Json;

/**
 * The one intake path ({@link PairIntake#take}) from each {@link IntakeSource}, on a real database: what it stores,
 * what it announces, which attempt it hands the engine (a stand-in consumer on {@code delivery.attempt} that records
 * and answers {@code delivered}), and what it refuses before anything is stored. Users are a hand-written map.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PairIntakeTest {
  private static final String HERE = "s1";
  private static final String MARK = "mark";
  private static final int SLOTS = 4;
  private static Vertx vertx;
  private static TestDatabase db;
  private static Pool pool;
  private static final KeyFile ALICE = KeyFile.generate("alice");
  private static final KeyFile BOB = KeyFile.generate("bob");
  private static final KeyFile CAROL = KeyFile.generate("carol");
  private static final KeyFile DAVE = KeyFile.generate("dave");
  private static final KeyFile MALLORY = KeyFile.generate("mallory");
  private static final KeyFile ERIN = KeyFile.generate("erin");
  private static final KeyFile ERIN_RETIRED = KeyFile.generate("erin");
  private static final KeyFile ERIN_REVOKED = KeyFile.generate("erin");
  /** When erin's retired key was retired: long before these tests, so its retry window has passed. */
  private static final long ERIN_RETIRED_AT = System.currentTimeMillis() - Duration.ofDays(10).toMillis();
  /**
   * alice: here and on s2; bob: elsewhere (s3, s4); carol: here only; dave: elsewhere only; erin: here and on s2, with
   * a retired and a revoked key besides her current one (PROTOCOL §4 v3).
   */
  private static final Map<String, StoredUser> USERS = Map.of(
      "alice", user("alice", ALICE, "s1", "s2"),
      "bob", user("bob", BOB, "s3", "s4"),
      "carol", user("carol", CAROL, "s1"),
      "dave", user("dave", DAVE, "s3"),
      "erin", new StoredUser("erin", 0, 3, KeyRing.of(List.of(ERIN.publicKeyB64()),
          Map.of(ERIN_RETIRED.publicKeyB64(), ERIN_RETIRED_AT), Set.of(ERIN_REVOKED.publicKeyB64())), "{}",
          List.of(new UserCard.Route("s1", "ws://127.0.0.1:1/s1"), new UserCard.Route("s2", "ws://127.0.0.1:1/s2"))));

  private final List<AttemptRequest> attempts = new CopyOnWriteArrayList<>();
  private final List<ForwardRequest> forwards = new CopyOnWriteArrayList<>();
  private final Map<String, List<String>> pushed = new ConcurrentHashMap<>();
  private final List<MessageConsumer<?>> consumers = new ArrayList<>();
  private final Map<String, Promise<Void>> marks = new ConcurrentHashMap<>();
  private Context context;
  private MutableClock clock;
  private AttemptSlots slots;
  private PairIntake intake;

  @BeforeAll
  static void database() {
    vertx = Vertx.vertx();
    db = TestDatabase.create(vertx);
    pool = db.pool();
    new Migrator(pool).migrate().await();
    LocalRecordCodec.registerOnce(vertx, List.of(AttemptRequest.class, ForwardRequest.class, DeliveryState.class));
  }

  @AfterAll
  static void dropDatabase() {
    pool.close().await();
    db.close();
    vertx.close().await();
  }

  @BeforeEach
  void intake() {
    AppConfig config = ConfigLoader.parse("{\"serverLogin\":\"" + HERE + "\"}", Map.of());
    clock = MutableClock.now();
    slots = new AttemptSlots(SLOTS);
    Frames frames = new Frames(Json.MAPPER);
    Events events = new Events(vertx, frames, new HubSubscribers(16));
    EngineClient engine = new EngineClient(vertx.eventBus(), slots, config.delivery());
    CopyStore copies = new CopyStore(new DmRepository(pool, HERE), clock, new SignatureVerifier(vertx, 16),
        new SignerCheck(clock, config.delivery().lastPointMs() + config.delivery().maxClockSkewMs()), 100);
    AgePlan agePlan = new AgePlan(new DeliverySchedule(config.delivery().scheduleMs(),
        config.delivery().askSiblingFromAttempt()), new DeliveryRepository(pool),
        new PeerCalls(vertx.eventBus(), 1_000), frames, clock);
    PairIntake.Users users = login -> USERS.containsKey(login) ? Future.succeededFuture(USERS.get(login))
        : Future.failedFuture(ProtocolErrors.userNotFound(login));
    intake = new PairIntake(config, users, copies, engine, clock, events, new ClockSkew(clock,
        config.delivery().maxClockSkewMs()), agePlan);
    context = vertx.getOrCreateContext();
    onContext(() -> {
      consumers.add(vertx.eventBus().<AttemptRequest>localConsumer(Addresses.DELIVERY_ATTEMPT, m -> {
        attempts.add(m.body());
        slots.release();
        m.reply(DeliveryState.DELIVERED);
      }));
      consumers.add(vertx.eventBus().<ForwardRequest>localConsumer(Addresses.DELIVERY_FORWARD,
          m -> forwards.add(m.body())));
      for (String login : USERS.keySet()) {
        consumers.add(vertx.eventBus().<String>localConsumer(Addresses.userEvents(login), m -> {
          if (MARK.equals(m.body())) {
            marks.remove(login).complete();
          } else {
            pushed.computeIfAbsent(login, l -> new CopyOnWriteArrayList<>()).add(m.body());
          }
        }));
      }
      return Future.all(consumers.stream().map(MessageConsumer::completion).toList()).mapEmpty();
    }).await();
  }

  @AfterEach
  void unregister() {
    onContext(() -> Future.all(consumers.stream().map(MessageConsumer::unregister).toList()).mapEmpty()).await();
  }

  @Test
  @DisplayName("a session's pair is stored, its first attempt answers the session and forwards the pair to the"
      + " sender's sibling; the sender's other sessions hear of it")
  void client() {
    ShineClient.SignedPair pair = pair(ALICE, "alice", "bob");

    PairIntake.Intake taken = take(Arrival.pair(IntakeSource.CLIENT, signed(pair), null, "session-1", null));

    assertThat(taken.written()).isTrue();
    assertThat(taken.state()).isEqualTo(DeliveryState.DELIVERED);
    assertThat(attempts).singleElement().satisfies(request -> {
      assertThat(request.notifySender()).as("the session waits for the answer itself").isFalse();
      assertThat(request.forward()).isNotNull();
      assertThat(request.forward().baseKey()).isEqualTo(pair.outgoing().baseKey());
    });
    assertThat(copies(pair)).containsExactly("alice");
    assertThat(outboxSynced(pair)).containsExactly(false);
    assertThat(pushesOf("alice")).singleElement().asString().contains("OutgoingDirectMessage");
    assertThat(slots.free()).isEqualTo(SLOTS);
  }

  @Test
  @DisplayName("an identical repeat is answered from the stored bytes, before any check of the new: no attempt,"
      + " no event, even when the clock rule would now refuse it; only a forward that goes while the sibling is owed"
      + " the pair")
  void repeat() {
    ShineClient.SignedPair pair = pair(ALICE, "alice", "bob");
    take(Arrival.pair(IntakeSource.CLIENT, signed(pair), null, "session-1", null));
    attempts.clear();
    int events = pushesOf("alice").size();

    clock.advance(Duration.ofDays(1));
    PairIntake.Intake again = take(Arrival.pair(IntakeSource.CLIENT, signed(pair), null, "session-1", null));

    assertThat(again.written()).isFalse();
    assertThat(again.state()).as("the stored row's state").isEqualTo(DeliveryState.ACCEPTED);
    assertThat(attempts).isEmpty();
    assertThat(forwards).singleElement().satisfies(forward -> {
      assertThat(forward.onlyIfOwed()).isTrue();
      assertThat(forward.baseKey()).isEqualTo(pair.outgoing().baseKey());
    });
    assertThat(pushesOf("alice")).hasSize(events);
    assertThat(slots.free()).as("the reserved place is given back").isEqualTo(SLOTS);
  }

  @Test
  @DisplayName("a pair from the sender's sibling is stored synced, and its own first attempt tells the sender's"
      + " sessions, with nothing forwarded")
  void senderSibling() {
    ShineClient.SignedPair pair = pair(ALICE, "alice", "bob");

    PairIntake.Intake taken = take(Arrival.pair(IntakeSource.SENDER_SIBLING, signed(pair), "s2", null, null));

    assertThat(taken.written()).isTrue();
    assertThat(taken.state()).as("answered before the attempt").isEqualTo(DeliveryState.ACCEPTED);
    assertThat(taken.firstAttempt()).isNotNull();
    assertThat(outboxSynced(pair)).containsExactly(true);
    assertThat(forwards).isEmpty();
    assertThat(pushesOf("alice")).singleElement().asString().contains("OutgoingDirectMessage");
  }

  @Test
  @DisplayName("a pair to a recipient served here is delivered at once with the recipient's copy, which is pushed;"
      + " no attempt")
  void recipientHere() {
    ShineClient.SignedPair pair = pair(ALICE, "alice", "carol");

    PairIntake.Intake taken = take(Arrival.pair(IntakeSource.SENDER_SIBLING, signed(pair), null, null, null));

    assertThat(taken.state()).isEqualTo(DeliveryState.DELIVERED);
    assertThat(taken.recipientCopyWritten()).isTrue();
    assertThat(copies(pair)).containsExactlyInAnyOrder("alice", "carol");
    assertThat(outboxSynced(pair)).as("not from a trusted sibling: both items go to the siblings")
        .containsExactly(false, false);
    assertThat(taken.firstAttempt()).isNull();
    assertThat(pushesOf("carol")).singleElement().asString().contains("IncomingDirectMessage");
  }

  @Test
  @DisplayName("a recipient's copy from the sender's server is stored for the recipient and pushed to it")
  void recipientDelivery() {
    DmContainer incoming = pair(BOB, "bob", "carol").incoming();

    PairIntake.Intake taken = take(Arrival.copy(IntakeSource.RECIPIENT_DELIVERY, incoming, "s3"));

    assertThat(taken.written()).isTrue();
    assertThat(taken.recipientCopyWritten()).isTrue();
    assertThat(taken.state()).isNull();
    assertThat(ownersOf(incoming.baseKey())).containsExactly("carol");
    assertThat(pushesOf("carol")).singleElement().asString().contains("IncomingDirectMessage");
    assertThat(attempts).isEmpty();
  }

  @Test
  @DisplayName("a pair pulled from the sender's sibling is stored synced, joins the schedule by its age, and makes"
      + " no attempt now; a copy pulled so is stored synced too")
  void sync() {
    ShineClient.SignedPair pair = pair(ALICE, "alice", "bob");

    PairIntake.Intake taken = take(Arrival.pair(IntakeSource.SYNC, signed(pair), "s2", null, "ws://127.0.0.1:1/ws"));

    assertThat(taken.written()).isTrue();
    assertThat(taken.state()).isEqualTo(DeliveryState.ACCEPTED);
    assertThat(taken.firstAttempt()).isNull();
    assertThat(attempts).isEmpty();
    assertThat(outboxSynced(pair)).containsExactly(true);

    DmContainer incoming = pair(DAVE, "dave", "alice").incoming();
    PairIntake.Intake copy = take(Arrival.copy(IntakeSource.SYNC, incoming, "s2"));
    assertThat(copy.recipientCopyWritten()).isTrue();
    assertThat(outboxSyncedOf(incoming.baseKey())).containsExactly(true);
  }

  @Test
  @DisplayName("a container not signed with its author's key is refused with 400 BAD_SIGNATURE and nothing is"
      + " stored, whatever the source")
  void badSignature() {
    for (IntakeSource source : List.of(IntakeSource.CLIENT, IntakeSource.SENDER_SIBLING, IntakeSource.SYNC)) {
      ShineClient.SignedPair forged = pair(MALLORY, "alice", "bob");
      assertRefused(Arrival.pair(source, signed(forged), "s2", null, "ws://127.0.0.1:1/ws"), Status.BAD_REQUEST,
          ErrorCode.BAD_SIGNATURE);
      assertThat(copies(forged)).as(source.name()).isEmpty();
      assertThat(outboxSynced(forged)).isEmpty();
    }
    DmContainer forgedCopy = pair(MALLORY, "bob", "carol").incoming();
    assertRefused(Arrival.copy(IntakeSource.RECIPIENT_DELIVERY, forgedCopy, null), Status.BAD_REQUEST,
        ErrorCode.BAD_SIGNATURE);
    assertThat(ownersOf(forgedCopy.baseKey())).isEmpty();
    assertThat(attempts).isEmpty();
    assertThat(pushed).isEmpty();
    assertThat(slots.free()).as("the reserved place is given back").isEqualTo(SLOTS);
  }

  @Test
  @DisplayName("a revoked key is refused with 400 KEY_REVOKED from every source, sync included; a retired key's old"
      + " message still comes from the author's own servers (a sibling's forward, sync) but not from an anonymous"
      + " caller")
  void retiredAndRevokedKeys() {
    for (IntakeSource source : List.of(IntakeSource.CLIENT, IntakeSource.SENDER_SIBLING, IntakeSource.SYNC)) {
      ShineClient.SignedPair stolen = pair(ERIN_REVOKED, "erin", "bob");
      assertRefused(Arrival.pair(source, signed(stolen), "s2", "session-1", "ws://127.0.0.1:1/ws"),
          Status.BAD_REQUEST, ErrorCode.KEY_REVOKED);
      assertThat(copies(stolen)).as(source.name()).isEmpty();
    }
    long before = ERIN_RETIRED_AT - 1_000;
    ShineClient.SignedPair anonymous = ShineClient.signPair("erin", ERIN_RETIRED, "bob", before,
        ShineClient.randomNonce(), 0, "old".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    assertRefused(Arrival.pair(IntakeSource.SENDER_SIBLING, signed(anonymous), null, null, null), Status.BAD_REQUEST,
        ErrorCode.BAD_SIGNATURE);
    for (IntakeSource source : List.of(IntakeSource.SENDER_SIBLING, IntakeSource.SYNC)) {
      // to carol, served here: delivered at once, so an old synced pair asks no peer how it went
      ShineClient.SignedPair old = ShineClient.signPair("erin", ERIN_RETIRED, "carol", before,
          ShineClient.randomNonce(), 0, "old".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      PairIntake.Intake taken = take(Arrival.pair(source, signed(old), "s2", null, "ws://127.0.0.1:1/ws"));
      assertThat(taken.written()).as(source.name()).isTrue();
      assertThat(copies(old)).as(source.name()).containsExactly("carol", "erin");
    }
  }

  @Test
  @DisplayName("a server op for a user this server does not serve is refused with 421 NOT_ACCESS_SERVER, an unknown"
      + " user with 404 USER_NOT_FOUND; nothing is stored")
  void notServedHere() {
    ShineClient.SignedPair fromDave = pair(DAVE, "dave", "bob");
    assertRefused(Arrival.pair(IntakeSource.SENDER_SIBLING, signed(fromDave), "s3", null, null), Status.MISDIRECTED,
        ErrorCode.NOT_ACCESS_SERVER);
    DmContainer toBob = pair(ALICE, "alice", "bob").incoming();
    assertRefused(Arrival.copy(IntakeSource.RECIPIENT_DELIVERY, toBob, null), Status.MISDIRECTED,
        ErrorCode.NOT_ACCESS_SERVER);
    ShineClient.SignedPair toNobody = pair(ALICE, "alice", "nobody");
    assertRefused(Arrival.pair(IntakeSource.CLIENT, signed(toNobody), null, "session-1", null), Status.NOT_FOUND,
        ErrorCode.USER_NOT_FOUND);
    assertThat(copies(fromDave)).isEmpty();
    assertThat(ownersOf(toBob.baseKey())).isEmpty();
    assertThat(copies(toNobody)).isEmpty();
    assertThat(slots.free()).isEqualTo(SLOTS);
  }

  /** Takes {@code arrival} in, then waits until every event it published has reached the users' consumers. */
  private PairIntake.Intake take(Arrival arrival) {
    try {
      return onContext(() -> intake.take(arrival)).await();
    } finally {
      settle();
    }
  }

  /** A mark published to each user after the intake's events arrives after them (one sender, one order). */
  private void settle() {
    List<Future<Void>> arrived = new ArrayList<>();
    onContext(() -> {
      for (String login : USERS.keySet()) {
        Promise<Void> mark = Promise.promise();
        marks.put(login, mark);
        arrived.add(mark.future());
        vertx.eventBus().publish(Addresses.userEvents(login), MARK);
      }
      return Future.succeededFuture();
    }).await();
    Future.all(arrived).await();
  }

  private void assertRefused(Arrival arrival, int status, String code) {
    assertThatThrownBy(() -> take(arrival)).isInstanceOfSatisfying(ProtocolException.class, e -> {
      assertThat(e.status()).isEqualTo(status);
      assertThat(e.code()).isEqualTo(code);
    });
  }

  /** Runs on the test's one context, as a delivery instance runs on its own (its batchers are confined to it). */
  private <T> Future<T> onContext(Supplier<Future<T>> work) {
    Promise<T> promise = Promise.promise();
    context.runOnContext(v -> work.get().onComplete(promise));
    return promise.future();
  }

  private List<String> pushesOf(String login) {
    return pushed.getOrDefault(login, List.of());
  }

  private static SignedPair signed(ShineClient.SignedPair pair) {
    return new SignedPair(pair.incoming(), pair.outgoing());
  }

  /** A fresh pair from {@code from} to {@code to}, created now, signed with {@code key}. */
  private ShineClient.SignedPair pair(KeyFile key, String from, String to) {
    return ShineClient.signPair(from, key, to, clock.millis(), ShineClient.randomNonce(), 0,
        Base64.getDecoder().decode("aGk="));
  }

  private static List<String> copies(ShineClient.SignedPair pair) {
    return ownersOf(pair.outgoing().baseKey());
  }

  private static List<String> ownersOf(String baseKey) {
    List<String> owners = new ArrayList<>();
    pool.preparedQuery("SELECT owner FROM dm_message WHERE base_key = $1 ORDER BY owner").execute(Tuple.of(baseKey))
        .await().forEach(row -> owners.add(row.getString(0)));
    return owners;
  }

  private static List<Boolean> outboxSynced(ShineClient.SignedPair pair) {
    return outboxSyncedOf(pair.outgoing().baseKey());
  }

  private static List<Boolean> outboxSyncedOf(String baseKey) {
    List<Boolean> synced = new ArrayList<>();
    // a stored copy is synced when no sync queue row owes it to anybody (V13: a copy is its own sync item)
    pool.preparedQuery("SELECT NOT EXISTS (SELECT 1 FROM sync_queue q WHERE q.owner = m.owner"
            + " AND q.item_key = m.base_key) FROM dm_message m WHERE m.base_key = $1 ORDER BY m.owner")
        .execute(Tuple.of(baseKey)).await().forEach(row -> synced.add(row.getBoolean(0)));
    return synced;
  }

  private static StoredUser user(String login, KeyFile key, String... servers) {
    List<UserCard.Route> routes = new ArrayList<>();
    for (String server : servers) {
      routes.add(new UserCard.Route(server, "ws://127.0.0.1:1/" + server));
    }
    return new StoredUser(login, key.publicKey(), 1, "{}", routes);
  }
}
