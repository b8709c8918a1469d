package org.shine.server.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.http.ServerWebSocketHandshake;
import io.vertx.core.net.SocketAddress;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.net.BindException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.shine.server.bus.BusReplies;
import org.shine.server.bus.Failures;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.db.StorageHealth;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.hub.HubRoutes;
import org.shine.server.hub.HubService;
import org.shine.server.metrics.SendOutcome;
import org.shine.server.metrics.SessionKind;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.peer.ServerIdentity;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.Ops;
import org.shine.server.protocol.JsonText;
import org.shine.server.protocol.ProtocolErrors;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.Json;
import org.shine.server.util.Liveness;
import org.shine.server.util.PerKeyLimit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The WebSocket gateway ({@code /ws}, which answers plain HTTP with 426), {@code /} (what this server is),
 * {@code /health} (liveness: every event loop answers), {@code /ready} (readiness: the database answers, not
 * draining), {@code /metrics}, {@code /.well-known/shine-server}, the web chat ({@code /app}, {@link WebApp}) and the
 * hub's HTTP routes ({@code /hub/v1}): reads envelopes, enforces the connection and session limits, hands each
 * request to the {@link OpDispatcher} and maps every failure to an error frame in one place. Every instance listens
 * on the same port; Vert.x spreads connections over them.
 *
 * <p>Limits (PROTOCOL §11): connections per node and per address ({@link ConnectionBudget}, shared by the
 * instances); an anonymous session that sends no request for {@code authTimeoutMs} is closed; every session is
 * pinged every third of {@code idleTimeoutMs} and closed when it has sent nothing, not even a pong, for that long;
 * a session holding more than {@code writeQueueBytes} unsent is no longer read, gets no events until it drains
 * (then it is closed if it missed any, so the client reloads), and is closed when it stays so for
 * {@code slowReaderCloseMs}.
 */
public final class GatewayVerticle extends VerticleBase {
  private static final Logger LOG = LoggerFactory.getLogger(GatewayVerticle.class);
  private static final Set<String> ENVELOPE_FIELDS = Set.of("op", "requestId", "payload");
  private static final long DRAIN_POLL_MS = 50;
  private static final long DRAIN_LIMIT_MS = 10_000;
  /** A connection over the limits gets this long to read its 503 before it is cut. */
  private static final long REFUSED_GRACE_MS = 2_000;
  private static final short CLOSE_POLICY = 1008;
  private static final short CLOSE_GOING_AWAY = 1001;
  private static final Buffer PING = Buffer.buffer("shine");
  /** HTTP 426: {@code /ws} asked for without a WebSocket upgrade. */
  private static final int UPGRADE_REQUIRED = 426;
  private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

  private final AppConfig config;
  private final Clock clock;
  private final ServerIdentity identity;
  private final SignatureVerifier verifier;
  private final PerKeyLimit polls;
  private final ConnectionBudget connections;
  private final OpLimits limits;
  private final ShineMetrics metrics;
  private final StorageHealth health;
  private final SessionRegistry registry;
  private final Set<Session> sessions = new HashSet<>();
  /** Remote addresses (host:port) of this instance's connections that are over the limits. */
  private final Set<String> refused = new HashSet<>();
  /**
   * How each budgeted connection of this instance (by remote host:port) gives its place back, once. A connection
   * upgraded to a WebSocket reports its close only on the WebSocket (Vert.x moves the channel to a handler of its
   * own, so the HTTP connection's close handler never runs), so the WebSocket's close handler must release it too.
   */
  private final Map<String, Runnable> releases = new HashMap<>();
  private Frames frames;
  private OpDispatcher dispatcher;
  private HttpServer server;
  private Liveness liveness;
  private LegacyPeerAddresses legacyPeers;
  private long housekeeping = -1;
  private boolean draining;

  public GatewayVerticle(AppConfig config, Clock clock, ServerIdentity identity, SignatureVerifier verifier,
      PerKeyLimit polls, ConnectionBudget connections, OpLimits limits,
      ShineMetrics metrics, StorageHealth health, SessionRegistry registry) {
    this.config = config;
    this.clock = clock;
    this.identity = identity;
    this.verifier = verifier;
    this.polls = polls;
    this.connections = connections;
    this.limits = Objects.requireNonNull(limits);
    this.metrics = metrics;
    this.health = Objects.requireNonNull(health);
    this.registry = registry;
  }

  @Override
  public Future<?> start() {
    frames = new Frames(Json.MAPPER);
    legacyPeers = new LegacyPeerAddresses(vertx, config);
    dispatcher = new OpDispatcher(vertx, config, identity, frames, verifier, limits, legacyPeers);
    liveness = new Liveness(vertx, Liveness.DEFAULT_BOUND_MS);
    Router router = Router.router(vertx);
    router.route().handler(ctx -> {
      if (refused.contains(key(ctx.request().remoteAddress()))) {
        ctx.response().setStatusCode(Status.UNAVAILABLE).putHeader("connection", "close")
            .putHeader("content-type", "application/json")
            .end("{\"error\":{\"code\":\"" + ErrorCode.OVERLOADED + "\",\"message\":\"too many connections\"}}");
      } else {
        ctx.next();
      }
    });
    new HubRoutes(config.hub(), new HubService(vertx, config, Database.sharedPool(vertx, config.db()), clock, verifier,
        polls)).mount(router);
    router.get("/health").handler(this::health);
    String about = about();
    router.get("/").handler(ctx -> ctx.response().putHeader("content-type", "application/json").end(about));
    // a browser or curl on /ws: say what the endpoint wants instead of a 404 page
    router.route("/ws").handler(ctx -> ctx.response().setStatusCode(UPGRADE_REQUIRED)
        .putHeader("upgrade", "websocket").putHeader("connection", "Upgrade")
        .putHeader("content-type", "application/json")
        .end("{\"error\":{\"code\":\"" + ErrorCode.UPGRADE_REQUIRED + "\",\"message\":\"/ws is the WebSocket endpoint"
            + " of the SHiNE DM protocol: connect with a WebSocket client (ws:// or wss://), not plain HTTP\"}}"));
    router.get("/ready").handler(this::ready);
    String wellKnown = Json.MAPPER.createObjectNode().put("serverLogin", identity.serverLogin())
        .put("publicKeyB64", identity.publicKeyB64()).put("url", identity.url()).toString();
    router.get("/.well-known/shine-server").handler(ctx -> ctx.response()
        .putHeader("content-type", "application/json").putHeader("cache-control", "no-cache").end(wellKnown));
    WebApp.mount(router);
    metrics.scrapeRegistry().ifPresent(registry -> router.get("/metrics").handler(ctx -> scrape(ctx, registry)));
    // the hard cap only bounds memory; frames above the configured limit still get a 413 answer
    int hardCap = Math.max(config.limits().maxFrameBytes() * 4, 1 << 20);
    boolean compression = config.limits().webSocketCompression();
    HttpServerOptions options = new HttpServerOptions()
        .setHost(config.http().host())
        .setPort(config.http().port())
        .setMaxWebSocketFrameSize(hardCap)
        .setMaxWebSocketMessageSize(hardCap)
        .setPerMessageWebSocketCompressionSupported(compression)
        .setPerFrameWebSocketCompressionSupported(compression)
        // no HTTP/2 over cleartext (nothing here speaks it): with h2c on, a connection's first request can reach the
        // metrics SPI before the connection's metric is set (an NPE in vertx-micrometer's requestBegin), and that
        // request is never answered; seen at start-up under reconnecting clients
        .setHttp2ClearTextEnabled(false)
        // a backstop for connections that never speak; sessions are timed out by housekeeping, with a reason
        .setReadIdleTimeout((int) Math.min(Integer.MAX_VALUE, backstopIdleMs()))
        .setIdleTimeoutUnit(TimeUnit.MILLISECONDS);
    server = vertx.createHttpServer(options)
        .connectionHandler(this::onConnection)
        .webSocketHandshakeHandler(this::handshake)
        .webSocketHandler(this::accept)
        .requestHandler(router);
    housekeeping = vertx.setPeriodic(housekeepingPeriodMs(), id -> housekeeping());
    return legacyPeers.start().compose(v -> server.listen()).recover(failure -> Future.failedFuture(new IllegalStateException("cannot listen on "
        + config.http().host() + ":" + config.http().port() + " (http.host, http.port): " + failure.getMessage()
        + (failure instanceof BindException ? "; is another server running on that port?" : ""),
        failure)));
  }

  /**
   * {@code GET /health}, liveness (PROTOCOL §11-§12): 200 UP while every event loop answers within the bound, 503
   * DOWN when one does not, 503 DRAINING while shutting down. No database check (that is readiness).
   */
  private void health(RoutingContext ctx) {
    liveness.check().onComplete(ar -> {
      Liveness.Report report = ar.result();
      String status = draining ? "DRAINING" : report.alive() ? "UP" : "DOWN";
      ObjectNode body = Json.MAPPER.createObjectNode().put("status", status);
      body.putObject("checks").putObject("eventLoops").put("status", report.alive() ? "UP" : "DOWN")
          .put("count", report.eventLoops()).put("silent", report.silent()).put("slowestMs", report.slowestMs())
          .put("boundMs", report.boundMs());
      if (!report.alive()) {
        LOG.error("liveness: {} of {} event loops did not answer within {} ms", report.silent(),
            report.eventLoops(), report.boundMs());
      }
      ctx.response().setStatusCode(status.equals("UP") ? Status.OK : Status.UNAVAILABLE)
          .putHeader("content-type", "application/json").putHeader("cache-control", "no-cache")
          .end(body.toString());
    });
  }

  /** {@code GET /}: what this server is and where its endpoints are. */
  private String about() {
    ObjectNode body = Json.MAPPER.createObjectNode().put("server", "SHiNE DM access server")
        .put("serverLogin", identity.serverLogin()).put("url", identity.url());
    ObjectNode endpoints = body.putObject("endpoints");
    endpoints.put("/ws", "WebSocket: the client and server protocol (JSON text frames)");
    endpoints.put("/hub/v1", "HTTP polling hub for integrations without a WebSocket");
    endpoints.put("/health", "liveness");
    endpoints.put("/.well-known/shine-server", "this server's login, key and URL");
    if (metrics.scrapeRegistry().isPresent()) {
      endpoints.put("/metrics", "Prometheus metrics");
    }
    return body.toString();
  }

  /**
   * {@code GET /ready} (PROTOCOL §12): 200 {@code UP} when the database answers a check and the gateway takes work,
   * 503 {@code DOWN} when the database does not, 503 {@code DRAINING} while shutting down.
   */
  private void ready(RoutingContext ctx) {
    health.check().onComplete(ar -> {
      boolean database = ar.succeeded() && ar.result();
      String status = draining ? "DRAINING" : database ? "UP" : "DOWN";
      var body = Json.MAPPER.createObjectNode().put("status", status);
      body.putObject("checks").put("database", database ? "UP" : "DOWN")
          .put("gateway", draining ? "DRAINING" : "UP");
      if (!ctx.response().closed()) {
        ctx.response().setStatusCode(draining || !database ? Status.UNAVAILABLE : Status.OK)
            .putHeader("content-type", "application/json").putHeader("cache-control", "no-cache")
            .end(body.toString());
      }
    });
  }

  /** {@code GET /metrics}: formatting every meter is CPU work that grows with the meters, so not on an event loop. */
  private void scrape(RoutingContext ctx, PrometheusMeterRegistry registry) {
    vertx.executeBlocking(registry::scrape, false)
        .onSuccess(text -> ctx.response().putHeader("content-type", PROMETHEUS_TEXT).end(text))
        .onFailure(ctx::fail);
  }

  /** Drains: refuses new connections and requests, waits for in-flight requests, then closes. */
  @Override
  public Future<?> stop() {
    draining = true;
    vertx.cancelTimer(housekeeping);
    legacyPeers.stop();
    Promise<Void> drained = Promise.promise();
    long deadline = System.currentTimeMillis() + DRAIN_LIMIT_MS;
    waitForInFlight(drained, deadline);
    return drained.future().compose(v -> server.close());
  }

  private void waitForInFlight(Promise<Void> drained, long deadline) {
    int inFlight = sessions.stream().mapToInt(s -> s.inFlight).sum();
    if (inFlight == 0 || System.currentTimeMillis() > deadline) {
      if (inFlight > 0) {
        LOG.warn("drain limit reached with {} requests in flight", inFlight);
      }
      drained.complete();
      return;
    }
    vertx.setTimer(DRAIN_POLL_MS, id -> waitForInFlight(drained, deadline));
  }

  private long backstopIdleMs() {
    return Math.max(config.limits().idleTimeoutMs(), config.hub().maxWaitS() * 1000 + 5_000)
        + housekeepingPeriodMs();
  }

  private long housekeepingPeriodMs() {
    long shortest = Math.min(config.limits().authTimeoutMs(), Math.min(config.limits().slowReaderCloseMs(),
        config.limits().idleTimeoutMs() / 3));
    return Math.max(10, Math.min(1_000, shortest / 4));
  }

  private void onConnection(HttpConnection connection) {
    String address = connection.remoteAddress().hostAddress();
    String key = key(connection.remoteAddress());
    String why = connections.tryAcquire(address);
    if (why == null) {
      Runnable release = new Runnable() {
        private boolean released;

        @Override
        public void run() {
          if (!released) {
            released = true;
            releases.remove(key, this);
            connections.release(address);
          }
        }
      };
      releases.put(key, release);
      connection.closeHandler(v -> release.run());
      return;
    }
    LOG.debug("connection refused [address: {}]: {}", key, why);
    refused.add(key);
    connection.closeHandler(v -> refused.remove(key));
    vertx.setTimer(REFUSED_GRACE_MS, id -> connection.close());
  }

  private void handshake(ServerWebSocketHandshake handshake) {
    if (refused.contains(key(handshake.remoteAddress()))) {
      handshake.reject(Status.UNAVAILABLE);
    } else if (!"/ws".equals(handshake.path())) {
      handshake.reject(Status.NOT_FOUND);
    } else {
      handshake.accept();
    }
  }

  private static String key(SocketAddress address) {
    return address == null ? "" : address.hostAddress() + ":" + address.port();
  }

  private void accept(ServerWebSocket socket) {
    String key = key(socket.remoteAddress());
    Runnable release = releases.getOrDefault(key, () -> { });
    if (draining) {
      socket.closeHandler(v -> release.run());
      socket.close(CLOSE_GOING_AWAY, "server is shutting down");
      return;
    }
    Session session = new Session(socket, key, socket.remoteAddress() == null ? "" : socket.remoteAddress().hostAddress(),
        System.nanoTime());
    session.pushEvent = frame -> push(session, frame);
    sessions.add(session);
    metrics.sessionOpened();
    socket.setWriteQueueMaxSize(config.limits().writeQueueBytes());
    socket.textMessageHandler(text -> onText(session, text));
    socket.binaryMessageHandler(binary -> {
      heard(session);
      reply(session, null, null, ProtocolException.badRequest(ErrorCode.BAD_ENVELOPE,
          "binary frames are not supported; send JSON text frames"));
    });
    socket.pongHandler(pong -> heard(session));
    socket.closeHandler(v -> {
      release.run();
      close(session);
    });
    socket.exceptionHandler(failure -> LOG.debug("socket error [session: {}]: {}", session.who(), failure.toString()));
  }

  private void close(Session session) {
    if (!sessions.remove(session)) {
      return;
    }
    metrics.sessionClosed(session.countedKind);
    if (session.countedKind == SessionKind.CLIENT) {
      registry.closed(session.login);
    }
    if (session.events != null) {
      session.events.unregister();
    }
  }

  private static void heard(Session session) {
    session.lastHeardNanos = System.nanoTime();
  }

  /** Closes sessions past their auth, idle or slow-reader time, and pings the others that are due. */
  private void housekeeping() {
    long now = System.nanoTime();
    long authNanos = config.limits().authTimeoutMs() * 1_000_000L;
    long idleNanos = config.limits().idleTimeoutMs() * 1_000_000L;
    long pingNanos = idleNanos / 3;
    long slowNanos = config.limits().slowReaderCloseMs() * 1_000_000L;
    List<Session> due = new ArrayList<>();
    for (Session session : sessions) {
      if (session.socket.isClosed()) {
        continue;
      }
      if (session.congestedSinceNanos != 0 && now - session.congestedSinceNanos >= slowNanos) {
        terminate(session, CLOSE_POLICY, "slow reader: " + config.limits().writeQueueBytes()
            + " bytes unsent for " + config.limits().slowReaderCloseMs() + " ms; reconnect and reload history");
      } else if (session.anonymous() && session.inFlight == 0 && now - session.lastRequestNanos >= authNanos) {
        terminate(session, CLOSE_POLICY, "not logged in within " + config.limits().authTimeoutMs() + " ms");
      } else if (now - session.lastHeardNanos >= idleNanos) {
        terminate(session, CLOSE_GOING_AWAY, "idle for " + config.limits().idleTimeoutMs() + " ms");
      } else if (now - session.lastPingNanos >= pingNanos) {
        due.add(session);
      }
    }
    for (Session session : due) {
      session.lastPingNanos = now;
      if (session.congestedSinceNanos == 0) {
        session.socket.writePing(PING);
      }
    }
  }

  private void terminate(Session session, short code, String reason) {
    LOG.debug("session closed [session: {}, code: {}]: {}", session.who(), code, reason);
    session.socket.close(code, reason.length() > 120 ? reason.substring(0, 120) : reason);
  }

  private void onText(Session session, String text) {
    long now = System.nanoTime();
    session.lastHeardNanos = now;
    session.lastRequestNanos = now;
    JsonNode frame;
    try {
      frame = Json.MAPPER.readTree(text);
    } catch (JsonProcessingException e) {
      reply(session, null, null, tooLarge(text) ? frameTooLarge()
          : ProtocolException.badRequest(ErrorCode.BAD_JSON, "frame is not valid JSON: " + e.getOriginalMessage()));
      return;
    }
    String op = frame != null && frame.path("op").isTextual() ? frame.get("op").asText() : null;
    JsonNode requestId = frame != null && (frame.path("requestId").isTextual() || frame.path("requestId").isNumber())
        ? frame.get("requestId") : null;
    if (frame != null && JsonText.hasUnpairedSurrogate(frame)) {
      reply(session, op == null || JsonText.hasUnpairedSurrogate(op) ? null : op,
          requestId == null || JsonText.hasUnpairedSurrogate(requestId) ? null : requestId,
          tooLarge(text) ? frameTooLarge() : ProtocolException.badRequest(ErrorCode.BAD_JSON,
              "a string in the frame holds an unpaired surrogate escape (\\uD800-\\uDFFF): not Unicode text"));
      return;
    }
    ProtocolException invalid = tooLarge(text) ? frameTooLarge() : checkEnvelope(frame, op, requestId);
    if (invalid != null) {
      reply(session, op, requestId, invalid);
      return;
    }
    if (draining) {
      reply(session, op, requestId, new ProtocolException(Status.UNAVAILABLE, ErrorCode.OVERLOADED,
          "server is shutting down; retry on another server or later"));
      return;
    }
    if (session.inFlight >= config.limits().maxInFlightPerConnection()) {
      reply(session, op, requestId, new ProtocolException(Status.TOO_MANY_REQUESTS, ErrorCode.TOO_MANY_IN_FLIGHT,
          "more than " + config.limits().maxInFlightPerConnection() + " requests in flight on this connection"));
      return;
    }
    JsonNode payload = frame.has("payload") ? frame.get("payload") : JsonNodeFactory.instance.objectNode();
    session.inFlight++;
    dispatcher.dispatch(session, op, payload).onComplete(ar -> {
      session.inFlight--;
      recount(session);
      if (ar.succeeded()) {
        if (Ops.SEND_MESSAGE_PAIR.equals(op)) {
          metrics.sent(sendOutcome(ar.result().path("deliveryState").asText()));
        }
        write(session, frames.response(op, requestId, ar.result()));
      } else {
        reply(session, op, requestId, ar.cause());
      }
    });
  }

  /** After a request: a session that has just logged in moves to its kind's count. */
  private void recount(Session session) {
    SessionKind now = session.kind();
    if (now == session.countedKind || !sessions.contains(session)) {
      return;
    }
    metrics.sessionChanged(session.countedKind, now);
    session.countedKind = now;
    if (now == SessionKind.CLIENT) {
      registry.opened(session.login);
    }
  }

  private static ProtocolException checkEnvelope(JsonNode frame, String op, JsonNode requestId) {
    if (frame == null || !frame.isObject()) {
      return ProtocolException.badRequest(ErrorCode.BAD_ENVELOPE, "a frame must be a JSON object");
    }
    for (Iterator<String> names = frame.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!ENVELOPE_FIELDS.contains(name)) {
        return ProtocolException.badRequest(ErrorCode.UNKNOWN_FIELD, "unknown envelope field " + name);
      }
    }
    if (op == null) {
      return ProtocolException.badRequest(ErrorCode.BAD_ENVELOPE, "op must be a string");
    }
    if (requestId == null) {
      return ProtocolException.badRequest(ErrorCode.BAD_ENVELOPE, "requestId must be a string or a number");
    }
    if (frame.has("payload") && !frame.get("payload").isObject()) {
      return ProtocolException.badRequest(ErrorCode.BAD_ENVELOPE, "payload must be a JSON object");
    }
    return null;
  }

  private boolean tooLarge(String text) {
    int limit = config.limits().maxFrameBytes();
    return text.length() > limit || (text.length() * 3L > limit
        && text.getBytes(StandardCharsets.UTF_8).length > limit);
  }

  private ProtocolException frameTooLarge() {
    return new ProtocolException(Status.TOO_LARGE, ErrorCode.FRAME_TOO_LARGE,
        "frame exceeds " + config.limits().maxFrameBytes() + " bytes");
  }

  private static SendOutcome sendOutcome(String deliveryState) {
    return switch (deliveryState) {
      case "delivered" -> SendOutcome.DELIVERED;
      case "failed" -> SendOutcome.FAILED;
      default -> SendOutcome.ACCEPTED;
    };
  }

  private static SendOutcome refusedOutcome(int status) {
    if (status == Status.TOO_MANY_REQUESTS || status == Status.UNAVAILABLE) {
      return SendOutcome.OVERLOADED;
    }
    return status >= Status.INTERNAL ? SendOutcome.ERROR : SendOutcome.REFUSED;
  }

  private void reply(Session session, String op, JsonNode requestId, Throwable failure) {
    ProtocolException error = Failures.classify(failure);
    if (BusReplies.isTimeout(error) && !health.isUp()) {
      // the service waited on the database that is now known to be down
      error = ProtocolErrors.storageUnavailable();
    }
    if (Ops.SEND_MESSAGE_PAIR.equals(op)) {
      metrics.sent(refusedOutcome(error.status()));
    }
    if (ErrorCode.STORAGE_UNAVAILABLE.equals(error.code())) {
      // StorageHealth logs the outage once; one line per request would bury it
      health.suspect();
      LOG.debug("request failed [op: {}, session: {}, status: {}, code: {}]", op, session.who(), error.status(),
          error.code());
    } else if (error.status() >= Status.INTERNAL) {
      LOG.warn("request failed [op: {}, session: {}, status: {}, code: {}]", op, session.who(), error.status(),
          error.code());
    } else {
      LOG.debug("request refused [op: {}, session: {}, status: {}, code: {}]: {}", op, session.who(),
          error.status(), error.code(), error.getMessage());
    }
    write(session, frames.error(op, requestId, error.status(), error.code(), error.getMessage()));
  }

  /** A response: always written (reading stops while the session is congested, which bounds them). */
  private void write(Session session, String frame) {
    if (session.socket.isClosed()) {
      return;
    }
    session.socket.writeTextMessage(frame);
    watchCongestion(session);
  }

  /** An event: dropped while the session is congested (history and the hub still have it). */
  private void push(Session session, String frame) {
    if (session.congestedSinceNanos != 0) {
      session.droppedEvents++;
      return;
    }
    write(session, frame);
  }

  private void watchCongestion(Session session) {
    if (session.congestedSinceNanos != 0 || !session.socket.writeQueueFull()) {
      return;
    }
    session.congestedSinceNanos = System.nanoTime();
    session.socket.pause();
    session.socket.drainHandler(v -> {
      session.socket.drainHandler(null);
      session.congestedSinceNanos = 0;
      if (session.droppedEvents > 0) {
        terminate(session, CLOSE_POLICY, "slow reader: " + session.droppedEvents
            + " events were dropped; reconnect and reload history");
      } else {
        session.socket.resume();
      }
    });
    LOG.debug("session congested: no longer read [session: {}]", session.who());
  }
}
