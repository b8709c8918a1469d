package org.shine.server.peer;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import java.time.Clock;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.config.AppConfig;
import org.shine.server.db.ServerKeyRepository;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.egress.EgressPolicy;
import org.shine.server.egress.EgressResolver;
import org.shine.server.metrics.PeerCallOutcome;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.PerKeyRate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns this node's relations with other servers: one WebSocket connection per peer URL, shared by every verticle
 * through {@link Addresses#PEER_REQUEST}, each logged in as this server; and the check of other servers' logins
 * ({@link Addresses#PEER_VERIFY_LOGIN}). Connections go only to configured peers (kept open) and to URLs named in
 * current routes (opened on first use, closed when idle for {@code limits.idleTimeoutMs}). Each time a connection
 * opens it asks the directory to re-announce the cards of the users served here
 * ({@link Addresses#DIRECTORY_REANNOUNCE}: the peer may learn this server's URL from them, and then accept its
 * login); each time a server session opens it publishes {@link Addresses#PEER_CONNECTED} (sync pulls); when a
 * peer that was down answers again it publishes {@link Addresses#PEER_UP} (extra attempts, PROTOCOL §7.6). A peer
 * heard from (its server session to this node authenticated, or to another node of the deployment:
 * {@link Addresses#PEER_HEARD}) is dialed at once where it is down ({@link PeerConnection#heardFrom()}). The table
 * holds at most {@code maxConnections} connections; when it is full, the least recently used route connection that
 * is down or idle is closed for a new one, and a live, busy one never is (PROTOCOL §13; configured peers stay).
 */
public final class PeerVerticle extends VerticleBase {
  private static final Logger LOG = LoggerFactory.getLogger(PeerVerticle.class);
  /** The largest frame a peer sends us: its response cap (at least the default 4 MiB) and the envelope. */
  private static final int MIN_MESSAGE_BYTES = 4 << 20;
  private static final int FRAME_SLACK_BYTES = 64 * 1024;
  /** The peer-connection table's size unless a test gives another. */
  public static final int MAX_CONNECTIONS = 10_000;
  private static final long ROUTED_URL_TTL_NANOS = 10_000_000_000L;
  private static final DeliveryOptions LOCAL = new DeliveryOptions().setLocalOnly(true);
  private static final String NODE_HEADER = "node";
  /** This node among the deployment's, for {@link Addresses#PEER_HEARD}. */
  private final String nodeId = UUID.randomUUID().toString();
  /** Other nodes are told of a server heard from at most once a second per server. */
  private final PerKeyRate heardTold = new PerKeyRate(1, 1_000_000_000L, MAX_CONNECTIONS, System::nanoTime);
  private final AppConfig config;
  private final ServerIdentity identity;
  private final SignatureVerifier verifier;
  private final Clock clock;
  private final ShineMetrics metrics;
  private final ServerKeyRepository keys;
  private final Future<Void> nodeUp;
  private final int maxConnections;
  /** In access order: the least recently used connection first. */
  private final Map<String, PeerConnection> connections = new LinkedHashMap<>(16, 0.75f, true);
  /** URLs named by a current route: until when that is known, and the serverLogin the route gives. */
  private final Map<String, Routed> routedUrls = new HashMap<>();
  private Set<String> configuredUrls;
  private WebSocketClient client;
  private HttpClient http;
  private EgressResolver egress;
  private CallerHandshake handshake;
  private long idleTimer = -1;

  /** {@code nodeUp}: completes once the node's gateway listens; no peer is dialed before. */
  public PeerVerticle(PeerServices services, Future<Void> nodeUp) {
    this(services, nodeUp, MAX_CONNECTIONS);
  }

  /** With a table of {@code maxConnections} peer connections. */
  public PeerVerticle(PeerServices services, Future<Void> nodeUp, int maxConnections) {
    if (maxConnections < 1) {
      throw new IllegalArgumentException("maxConnections must be positive");
    }
    this.maxConnections = maxConnections;
    this.nodeUp = Objects.requireNonNull(nodeUp);
    this.config = services.config();
    this.identity = services.identity();
    this.verifier = services.verifier();
    this.clock = services.clock();
    this.metrics = services.metrics();
    this.keys = services.keys();
  }

  @Override
  public Future<?> start() {
    int maxMessage = Math.max(MIN_MESSAGE_BYTES, config.limits().maxResponseBytes()) + FRAME_SLACK_BYTES;
    // wss: the certificate must be valid for the URL's host (PROTOCOL §6a v3 step 2); SNI names that host
    client = vertx.createWebSocketClient(new WebSocketClientOptions()
        .setMaxFrameSize(maxMessage)
        .setMaxMessageSize(maxMessage)
        .setMaxConnections(MAX_CONNECTIONS)
        .setVerifyHost(true));
    http = vertx.createHttpClient(new HttpClientOptions().setConnectTimeout((int) config.delivery().callTimeoutMs())
        .setVerifyHost(true).setForceSni(true));
    egress = new EgressResolver(vertx, EgressPolicy.of(config));
    PeerKeys peerKeys = new PeerKeys(config, keys, http, verifier, egress, clock);
    handshake = new CallerHandshake(identity, peerKeys, verifier);
    configuredUrls = config.peers().stream().map(AppConfig.Peer::url).collect(Collectors.toUnmodifiableSet());
    for (AppConfig.Peer peer : config.peers()) {
      if (!config.ownUrl(peer.url())) {
        connections.put(peer.url(), newConnection(new PeerConnection.Target(peer.url(), peer.serverLogin(),
            peer.protocol(), true, peer.insecure())));
      }
    }
    long idleMs = config.limits().idleTimeoutMs();
    List<Long> schedule = config.delivery().scheduleMs();
    // a peer that is down keeps its reconnect loop while rows may still wait for it: the schedule's span
    long downIdleMs = Math.max(idleMs, schedule.get(schedule.size() - 1));
    idleTimer = vertx.setPeriodic(Math.max(50, idleMs / 3), id -> closeIdle(idleMs * 1_000_000L,
        downIdleMs * 1_000_000L));
    EventBus bus = vertx.eventBus();
    return Future.all(List.of(
        BusReplies.serve(bus, Addresses.PEER_REQUEST, this::call),
        BusReplies.<ServerLoginCheck, Boolean>serve(bus, Addresses.PEER_VERIFY_LOGIN,
            check -> peerKeys.verify(check).map(v -> {
              heardHere(check.serverLogin());
              return Boolean.TRUE;
            })),
        bus.<String>consumer(Addresses.PEER_HEARD, m -> {
          if (!nodeId.equals(m.headers().get(NODE_HEADER))) {
            heardFrom(m.body());
          }
        }).completion(),
        BusReplies.serve(bus, Addresses.PEER_STATUS, any -> Future.succeededFuture(status()))));
  }

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(idleTimer);
    connections.values().forEach(PeerConnection::close);
    return client.close().eventually(http::close).eventually(() -> {
      egress.close();
      return Future.succeededFuture();
    });
  }

  private Future<PeerResponse> call(PeerRequest request) {
    long start = System.nanoTime();
    PeerConnection open = connections.get(request.url());
    Future<PeerConnection> connection = open != null ? Future.succeededFuture(open)
        : allowed(request.url()).compose(serverLogin -> routeConnection(request.url(), serverLogin));
    return connection.compose(c -> c.call(request.op(), request.payload(), request.timeoutMs(), request.needsSession())
            .onComplete(ar -> metrics.peerCall(c.serverLogin(), request.op(), outcome(ar.cause()),
                System.nanoTime() - start)))
        .map(PeerResponse::new);
  }

  /**
   * PROTOCOL §7.6: {@code serverLogin} has just proved itself to this node (its login verified with its key, over a
   * challenge of ours), so it is up: this node's connections to it dial now, and the deployment's other nodes are
   * told (at most once a second per server), before the login is answered.
   */
  private void heardHere(String serverLogin) {
    heardFrom(serverLogin);
    if (heardTold.tryAcquire(serverLogin) == PerKeyRate.Grant.GRANTED) {
      vertx.eventBus().publish(Addresses.PEER_HEARD, serverLogin, new DeliveryOptions().addHeader(NODE_HEADER, nodeId));
    }
  }

  /** Each connection of this node to {@code serverLogin} that waits for its backoff goes now (paced by each). */
  private void heardFrom(String serverLogin) {
    for (PeerConnection connection : connections.values()) {
      if (connection.serverLogin().equals(serverLogin)) {
        connection.heardFrom();
      }
    }
  }

  private static PeerCallOutcome outcome(Throwable failure) {
    if (failure == null) {
      return PeerCallOutcome.OK;
    }
    if (failure instanceof ProtocolException refused && refused.status() != Status.UNAVAILABLE) {
      return PeerCallOutcome.REFUSED;
    }
    return failure instanceof ProtocolException e && ErrorCode.PEER_TIMEOUT.equals(e.code())
        ? PeerCallOutcome.TIMEOUT : PeerCallOutcome.UNAVAILABLE;
  }

  /** Every connection of this node as the admin API shows it (PROTOCOL §12). */
  private PeerStatus.All status() {
    return new PeerStatus.All(connections.values().stream().map(PeerConnection::status)
        .sorted(Comparator.comparing(PeerStatus::serverLogin).thenComparing(PeerStatus::url)).toList());
  }

  /**
   * The connection to a route's {@code url}: the open one, or a new one when the table has room or makes room by
   * closing the least recently used connection that is down or idle; 503 {@code PEER_BUSY} when every one is live
   * and busy.
   */
  private Future<PeerConnection> routeConnection(String url, String serverLogin) {
    PeerConnection open = connections.get(url);
    if (open != null) {
      return Future.succeededFuture(open);
    }
    if (connections.size() >= maxConnections && !evictOne()) {
      return Future.failedFuture(new ProtocolException(Status.UNAVAILABLE, ErrorCode.PEER_BUSY,
          "this node already holds " + maxConnections + " peer connections, every one live and busy"));
    }
    PeerConnection connection = newConnection(new PeerConnection.Target(url, serverLogin, AppConfig.PeerProtocol.V3,
        false, false));
    connections.put(url, connection);
    return Future.succeededFuture(connection);
  }

  /** Closes the least recently used route connection that is down or idle; false when there is none. */
  private boolean evictOne() {
    for (Iterator<PeerConnection> it = connections.values().iterator(); it.hasNext(); ) {
      PeerConnection candidate = it.next();
      if (!candidate.persistent() && (candidate.down() || !candidate.busy())) {
        LOG.info("peer connection evicted: the table of {} is full [url: {}, down: {}]", maxConnections,
            candidate.url(), candidate.down());
        candidate.close();
        it.remove();
        return true;
      }
    }
    return false;
  }

  /**
   * Only configured peers and URLs that a current route names. Completes with the serverLogin of the URL (the
   * configured peer's, or the one its route gives).
   */
  private Future<String> allowed(String url) {
    if (configuredUrls.contains(url)) {
      return Future.succeededFuture(config.peers().stream().filter(p -> p.url().equals(url)).findFirst()
          .map(AppConfig.Peer::serverLogin).orElse(url));
    }
    Routed known = routedUrls.get(url);
    long now = System.nanoTime();
    if (known != null && known.untilNanos() - now > 0) {
      return Future.succeededFuture(known.serverLogin());
    }
    return keys.routedServerLogin(url).compose(routed -> {
      if (routed.isEmpty()) {
        return Future.failedFuture(new ProtocolException(Status.FORBIDDEN, ErrorCode.PEER_NOT_ALLOWED,
            url + " is neither a configured peer nor named in any current route"));
      }
      if (routedUrls.size() >= maxConnections) {
        routedUrls.clear();
      }
      routedUrls.put(url, new Routed(now + ROUTED_URL_TTL_NANOS, routed.get()));
      return Future.succeededFuture(routed.get());
    });
  }

  private void closeIdle(long idleNanos, long downIdleNanos) {
    for (Iterator<Map.Entry<String, PeerConnection>> it = connections.entrySet().iterator(); it.hasNext(); ) {
      PeerConnection connection = it.next().getValue();
      if (!connection.persistent() && connection.idleNanos() >= (connection.down() ? downIdleNanos : idleNanos)) {
        LOG.debug("idle peer connection closed [url: {}]", connection.url());
        connection.close();
        it.remove();
      }
    }
  }

  private PeerConnection newConnection(PeerConnection.Target target) {
    // a peer applies its per-connection limit to us too (assume it is the same as ours); ours per destination is §13
    CallLimits limits = new CallLimits(Math.min(config.limits().maxInFlightPerConnection(),
        config.delivery().maxInFlightPerDestination()), config.delivery().queueCapacity(),
        config.delivery().timeoutsToDown(), config.limits().writeQueueBytes());
    return new PeerConnection(vertx, client, target, handshake, egress, nodeUp, metrics,
        config.delivery().callTimeoutMs(), limits,
        connected -> vertx.eventBus().send(Addresses.DIRECTORY_REANNOUNCE, connected, LOCAL),
        session -> vertx.eventBus().publish(Addresses.PEER_CONNECTED, session, LOCAL),
        returned -> vertx.eventBus().publish(Addresses.PEER_UP, returned, LOCAL));
  }

  private record Routed(long untilNanos, String serverLogin) {
  }
}
