package org.shine.server.delivery;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.Promise;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.config.AppConfig;
import org.shine.server.config.ConfigLoader;
import org.shine.server.db.Database;
import org.shine.server.db.DeliveryRepository;
import org.shine.server.db.DmRepository;
import org.shine.server.db.SignalRepository;
import org.shine.server.db.SyncRepository;
import org.shine.server.directory.UserDirectory;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.KeyFile;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.hub.HubSubscribers;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.model.CopyKey;
import org.shine.server.model.CopyWrite;
import org.shine.server.model.DeliveryPlan;
import org.shine.server.model.DeliveryState;
import org.shine.server.model.StoredUser;
import org.shine.server.model.UserCard;
import org.shine.server.node.LocalCodecs;
import org.shine.server.peer.PeerCalls;
import org.shine.server.peer.PeerRequest;
import org.shine.server.peer.PeerResponse;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.support.Eventually;
import org.shine.server.support.MutableClock;
import org.shine.server.support.Opened;
import org.shine.server.support.TestDatabase;
import org.shine.server.util.Json;

/**
 * Delivery without a server: the node's {@link DeliveryServices} over a fresh database (the real repositories), with
 * users kept in memory ({@link Users}, which counts every read), other servers played by {@link Peers} on the bus's
 * {@code peer.request}, and a clock the test moves. This node is {@code s1}.
 */
public final class DeliveryTestbed {
  public static final String SELF = "s1";
  private final TestDatabase db;
  private final AppConfig config;
  private final MutableClock clock = MutableClock.now();
  private final Pool pool;
  private final Users users = new Users();
  private final Peers peers = new Peers();
  private final AttemptSlots slots;
  private final DeliveryServices services;

  /** {@code delivery}: the config's {@code delivery} section (JSON), over the defaults. */
  public DeliveryTestbed(Vertx vertx, Opened opened, String delivery) {
    LocalCodecs.register(vertx);
    this.db = opened.keep(TestDatabase.create(vertx));
    Database.prepare(vertx, db.config()).await();
    this.pool = opened.pool(db);
    this.config = config(delivery);
    this.slots = new AttemptSlots(config.delivery().maxInFlight() + config.delivery().queueCapacity());
    HubSubscribers subscribers = new HubSubscribers(100);
    subscribers.load(List.of());
    this.services = new DeliveryServices(config, clock, ShineMetrics.disabled(), new SignatureVerifier(vertx, 100),
        users, new PeerCalls(vertx.eventBus(), config.delivery().callTimeoutMs()), slots,
        new EngineClient(vertx.eventBus(), slots, config.delivery()), subscribers, new DmRepository(pool, SELF),
        new DeliveryRepository(pool), new SignalRepository(pool, SELF), new SyncRepository(pool, SELF));
    BusReplies.<PeerRequest, PeerResponse>serve(vertx.eventBus(), Addresses.PEER_REQUEST, peers::answer).await();
  }

  /** This node's config with {@code delivery} (JSON) over the defaults' delivery section. */
  public static AppConfig config(String delivery) {
    return ConfigLoader.parse("{\"serverLogin\":\"" + SELF + "\",\"publicUrl\":\"ws://127.0.0.1:7101/ws\","
        + "\"delivery\":" + delivery + "}", Map.of());
  }

  public TestDatabase database() {
    return db;
  }

  public DeliveryServices services() {
    return services;
  }

  public AppConfig config() {
    return config;
  }

  public MutableClock clock() {
    return clock;
  }

  public Users users() {
    return users;
  }

  public Peers peers() {
    return peers;
  }

  public AttemptSlots slots() {
    return slots;
  }

  /**
   * Waits until every attempt has given its place back, i.e. recorded its outcome: a test that released held calls
   * calls this before its pool closes, since a pool closed while it opens a connection can hang (see
   * {@link Opened#pool}).
   */
  public void awaitIdle() {
    Eventually.until("every attempt gave its place back", 20_000, () -> slots.free() == slots.capacity(),
        () -> slots.free() + " of " + slots.capacity() + " places free");
  }

  /** A user with a fresh key, served by {@code serverLogins} in order, each at {@link #url}. */
  public KeyFile user(String login, String... serverLogins) {
    KeyFile key = KeyFile.generate(login);
    List<UserCard.Route> routes = new ArrayList<>();
    for (String server : serverLogins) {
      routes.add(new UserCard.Route(server, url(server)));
    }
    users.put(new StoredUser(login, key.publicKey(), 1, "{}", routes));
    return key;
  }

  /** The URL of server {@code serverLogin} (never dialed: {@link Peers} answers for it). */
  public static String url(String serverLogin) {
    return "ws://127.0.0.1:" + (7100 + Integer.parseInt(serverLogin.substring(1))) + "/ws";
  }

  /** A pair from {@code from} to {@code to}, created now by the test's clock. */
  public SignedPair pair(String from, KeyFile key, String to) {
    return ShineClient.signPair(from, key, to, clock.millis(), ShineClient.randomNonce(), 0, new byte[] {'h', 'i'});
  }

  /**
   * Stores {@code pair} for its sender as an accepted pair: {@code attemptsDone} made, the next due at
   * {@code nextAttemptAtMs}; the row is not leased.
   */
  public void storeAccepted(SignedPair pair, int attemptsDone, long nextAttemptAtMs) {
    DeliveryPlan plan = new DeliveryPlan(DeliveryState.ACCEPTED, pair.outgoing().createdAtMs(), attemptsDone,
        nextAttemptAtMs, 0);
    CopyKey key = new CopyKey(pair.outgoing().from(), pair.outgoing().baseKey());
    services.messages().storeCopies(List.of(new CopyWrite(key, DmKind.OUTGOING, pair.outgoing().to(),
        pair.outgoing().createdAtMs(), 0, pair.outgoing().bytes(), pair.incoming().bytes(), plan, false)),
        clock.millis()).await();
  }

  /** The stored delivery row of {@code pair}: its state, attempts made and next attempt time. */
  public Row row(SignedPair pair) {
    var rows = pool.preparedQuery("SELECT state, attempts, next_attempt_at_ms FROM dm_delivery WHERE base_key = $1")
        .execute(Tuple.of(pair.outgoing().baseKey())).await();
    var row = rows.iterator().next();
    return new Row(row.getString("state"), row.getInteger("attempts"), row.getLong("next_attempt_at_ms"));
  }

  /** The first attempt of {@code pair}, as the intake hands it over. */
  public static DeliveryTask firstAttempt(SignedPair pair) {
    return DeliveryTask.scheduled(pair.outgoing().baseKey(), 0, pair.outgoing().from(), pair.outgoing().to(),
        pair.incoming().bytes(), pair.outgoing().createdAtMs(), 1, 0);
  }

  /** A delivery row as stored. */
  public record Row(String state, int attempts, Long nextAttemptAtMs) {
  }

  /** Users in memory; every read is counted, per login. */
  public static final class Users implements UserDirectory {
    private final Map<String, StoredUser> byLogin = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> reads = new ConcurrentHashMap<>();

    void put(StoredUser user) {
      byLogin.put(user.login(), user);
    }

    @Override
    public Future<Optional<StoredUser>> find(String login) {
      reads.computeIfAbsent(login, l -> new AtomicInteger()).incrementAndGet();
      return Future.succeededFuture(Optional.ofNullable(byLogin.get(login)));
    }

    public int reads(String login) {
      AtomicInteger count = reads.get(login);
      return count == null ? 0 : count.get();
    }

    public int reads() {
      return reads.values().stream().mapToInt(AtomicInteger::get).sum();
    }
  }

  /**
   * Other servers: each URL ACKs, refuses (503) or holds its calls unanswered until the test releases them; every
   * call is recorded. A URL not told otherwise ACKs.
   */
  public static final class Peers {
    private final Map<String, Behaviour> behaviours = new ConcurrentHashMap<>();
    private final List<PeerRequest> calls = new CopyOnWriteArrayList<>();
    private final List<Held> held = Collections.synchronizedList(new ArrayList<>());

    public enum Behaviour { ACK, REFUSE, HOLD }

    public void set(String url, Behaviour behaviour) {
      behaviours.put(url, behaviour);
    }

    /** The calls made so far to {@code url} with {@code op}. */
    public long calls(String url, String op) {
      return calls.stream().filter(c -> c.url().equals(url) && c.op().equals(op)).count();
    }

    public int calls() {
      return calls.size();
    }

    /** Answers every held call of {@code url} with an ACK. */
    public void release(String url) {
      List<Held> released;
      synchronized (held) {
        released = held.stream().filter(h -> h.url().equals(url)).toList();
        held.removeAll(released);
      }
      released.forEach(h -> h.answer().complete(ack()));
    }

    /**
     * A held call is in {@link #release}'s reach before it is counted: a test that waits until a call is counted and
     * then releases its server never misses it (the bus calls this on an event loop, the test releases from its own
     * thread).
     */
    Future<PeerResponse> answer(PeerRequest request) {
      Future<PeerResponse> answer = switch (behaviours.getOrDefault(request.url(), Behaviour.ACK)) {
        case ACK -> Future.succeededFuture(ack());
        case REFUSE -> Future.failedFuture(new ProtocolException(Status.UNAVAILABLE, ErrorCode.PEER_UNAVAILABLE,
            request.url() + " is down"));
        case HOLD -> {
          Promise<PeerResponse> held = Promise.promise();
          this.held.add(new Held(request.url(), held));
          yield held.future();
        }
      };
      calls.add(request);
      return answer;
    }

    private static PeerResponse ack() {
      ObjectNode payload = Json.MAPPER.createObjectNode();
      return new PeerResponse(payload);
    }

    private record Held(String url, Promise<PeerResponse> answer) {
    }
  }
}
