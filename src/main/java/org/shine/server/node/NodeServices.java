package org.shine.server.node;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.time.Clock;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.db.DeliveryRepository;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.DmRepository;
import org.shine.server.db.HubRepository;
import org.shine.server.db.InviteRepository;
import org.shine.server.db.OpsRepository;
import org.shine.server.db.QuarantineRepository;
import org.shine.server.db.ServerKeyRepository;
import org.shine.server.db.SettingsRepository;
import org.shine.server.db.SignalRepository;
import org.shine.server.db.StorageHealth;
import org.shine.server.db.SyncRepository;
import org.shine.server.delivery.AttemptSlots;
import org.shine.server.delivery.DeliveryServices;
import org.shine.server.delivery.EngineClient;
import org.shine.server.directory.DirectoryCache;
import org.shine.server.directory.DirectoryServices;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.gateway.ConnectionBudget;
import org.shine.server.gateway.OpLimits;
import org.shine.server.gateway.SessionRegistry;
import org.shine.server.hub.HubSubscribers;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.ops.OpsServices;
import org.shine.server.peer.PeerCalls;
import org.shine.server.peer.PeerServices;
import org.shine.server.peer.ServerIdentity;
import org.shine.server.sync.SyncServices;
import org.shine.server.util.PerKeyLimit;
import org.shine.server.util.PerKeyRate;

/**
 * The composition root of one node: every service the verticles share, built once by {@link ShineServer} before it
 * deploys them, and handed to each verticle's factory (as the small record of what that verticle needs). Built here
 * and nowhere else: the one pool, the repositories over it, the one directory cache, the peer calls, the signature
 * verifier, the attempt slots and the engine client, the hub's subscribers, the node's limits and sessions.
 *
 * <p>The verticle instances that share these run on several event loops at once, so each is safe there: the pool,
 * the verifier, the slots, the limits, the subscribers and the sessions are thread-safe by their own Javadoc; the
 * repositories, the peer calls and the engine client hold only final references (the pool, the event bus) and no
 * state of their own; the directory cache is a bounded concurrent map ({@link DirectoryCache}). What must stay on one
 * event loop (micro-batchers, the engine's budget) is built per verticle instance from these.
 */
public final class NodeServices {
  /** Concurrent long polls of one user on one node (PROTOCOL §10: beyond, 429). */
  private static final int HUB_POLLS_PER_USER = 4;
  /** Users whose full re-sync (MarkAllUserSettingsUnsynced) the node tracks at once; beyond, new ones wait. */
  static final int RESYNC_USERS_PER_MIN = 10_000;
  /** Hub subscribers a node keeps in memory; beyond, every user's events get their hub entry built. */
  private static final int HUB_SUBSCRIBERS_KNOWN = 1_000_000;
  /**
   * Pool connections opened at start (at most {@code db.poolSize}); the rest open on demand. Few: every node of a
   * machine holds them while idle, and PostgreSQL's {@code max_connections} is shared by all.
   */
  static final int CONNECTIONS_AT_START = 4;
  /** At a stop, how long the pool's close waits for work still holding a connection (see {@link Database#close}). */
  private static final long POOL_SETTLE_MS = 5_000;
  private final Vertx vertx;
  private final AppConfig config;
  private final Clock clock;
  private final ShineMetrics metrics;
  private final ServerIdentity identity;
  private final StorageHealth health;
  private final Pool pool;
  private final SignatureVerifier verifier;
  private final AttemptSlots slots;
  private final HubSubscribers subscribers;
  private final SessionRegistry sessions;
  private final PerKeyLimit polls;
  private final ConnectionBudget connections;
  private final OpLimits limits;
  private final PerKeyRate resyncRate;
  private final DirectoryRepository users;
  private final DeliveryRepository deliveries;
  private final DmRepository messages;
  private final SignalRepository signals;
  private final SyncRepository outbox;
  private final SettingsRepository settings;
  private final QuarantineRepository quarantine;
  private final InviteRepository invites;
  private final ServerKeyRepository servers;
  private final HubRepository hub;
  private final OpsRepository ops;
  private final DirectoryCache directory;
  private final PeerCalls peers;
  private final EngineClient engine;

  /** The node's services over a database already prepared ({@code health} open, {@code identity} loaded). */
  public NodeServices(Vertx vertx, AppConfig config, Clock clock, ShineMetrics metrics, ServerIdentity identity,
      StorageHealth health) {
    this.vertx = Objects.requireNonNull(vertx);
    this.config = Objects.requireNonNull(config);
    this.clock = Objects.requireNonNull(clock);
    this.metrics = Objects.requireNonNull(metrics);
    this.identity = Objects.requireNonNull(identity);
    this.health = Objects.requireNonNull(health);
    this.pool = Database.sharedPool(vertx, config.db());
    this.verifier = new SignatureVerifier(vertx, config.limits().verifyQueue(), metrics);
    this.slots = new AttemptSlots(config.delivery().maxInFlight() + config.delivery().queueCapacity());
    this.subscribers = new HubSubscribers(HUB_SUBSCRIBERS_KNOWN);
    this.sessions = new SessionRegistry();
    this.polls = new PerKeyLimit(HUB_POLLS_PER_USER);
    this.connections = new ConnectionBudget(config.limits().maxConnections(), config.limits().maxConnectionsPerIp());
    this.limits = new OpLimits(config.limits(), System::nanoTime);
    this.resyncRate = new PerKeyRate(config.sync().markAllPerUserPerMin(), TimeUnit.MINUTES.toNanos(1),
        RESYNC_USERS_PER_MIN, System::nanoTime);
    this.users = new DirectoryRepository(pool);
    this.deliveries = new DeliveryRepository(pool);
    this.messages = new DmRepository(pool, config.serverLogin());
    this.signals = new SignalRepository(pool, config.serverLogin());
    this.outbox = new SyncRepository(pool, config.serverLogin(), clock);
    this.settings = new SettingsRepository(pool, config.quotas(), config.serverLogin());
    this.quarantine = new QuarantineRepository(pool);
    this.invites = new InviteRepository(pool);
    this.servers = new ServerKeyRepository(pool);
    this.hub = new HubRepository(pool);
    this.ops = new OpsRepository(pool);
    this.directory = new DirectoryCache(vertx, users, DirectoryCache.TTL_MS, DirectoryCache.MAX_ENTRIES);
    this.peers = new PeerCalls(vertx.eventBus(), config.delivery().callTimeoutMs());
    this.engine = new EngineClient(vertx.eventBus(), slots, config.delivery());
  }

  /**
   * Registers the node's local codecs, opens the pool's first connections and the health probe's (before the gateway
   * answers {@code /ready}: the first requests do not wait for PostgreSQL's connection start-up), and starts the
   * directory cache's listener of card changes.
   */
  public Future<Void> start() {
    LocalCodecs.register(vertx);
    return Future.join(Database.openConnections(pool, Math.min(config.db().poolSize(), CONNECTIONS_AT_START)),
            health.check())
        .compose(v -> directory.start());
  }

  /** After every verticle is undeployed: stops the cache's listener and closes the pool. */
  public Future<Void> close() {
    return directory.stop().eventually(() -> Database.close(pool, POOL_SETTLE_MS));
  }

  /** What delivery (its instances and the engine) takes. */
  public DeliveryServices forDelivery() {
    return new DeliveryServices(config, clock, metrics, verifier, directory, peers, slots, engine, subscribers,
        messages, deliveries, signals, outbox);
  }

  /** What the directory instances take. */
  public DirectoryServices forDirectory() {
    return new DirectoryServices(config, clock, pool, verifier, users, servers, invites, outbox, hub, peers);
  }

  /** What the sync instances take. */
  public SyncServices forSync() {
    return new SyncServices(config, clock, metrics, health, resyncRate, outbox, users, quarantine, settings, peers);
  }

  /** What the node's peer connections take. */
  public PeerServices forPeers() {
    return new PeerServices(config, identity, verifier, clock, metrics, servers);
  }

  /** What the operator's side takes. */
  public OpsServices forOps() {
    return new OpsServices(config, clock, metrics, sessions, ops, users, quarantine, invites);
  }

  public AppConfig config() {
    return config;
  }

  public Clock clock() {
    return clock;
  }

  public ShineMetrics metrics() {
    return metrics;
  }

  public ServerIdentity identity() {
    return identity;
  }

  public StorageHealth health() {
    return health;
  }

  public SignatureVerifier verifier() {
    return verifier;
  }

  public HubSubscribers subscribers() {
    return subscribers;
  }

  public SessionRegistry sessions() {
    return sessions;
  }

  public PerKeyLimit polls() {
    return polls;
  }

  public ConnectionBudget connections() {
    return connections;
  }

  public OpLimits limits() {
    return limits;
  }

  public DeliveryRepository deliveries() {
    return deliveries;
  }

  public EngineClient engine() {
    return engine;
  }

  public SettingsRepository settings() {
    return settings;
  }

  public HubRepository hub() {
    return hub;
  }

  /** The node's one pool. */
  public Pool pool() {
    return pool;
  }

  /** The node's one repository of users (cards and routes). */
  public DirectoryRepository users() {
    return users;
  }

  /** The node's one directory cache. */
  public DirectoryCache directoryCache() {
    return directory;
  }
}
