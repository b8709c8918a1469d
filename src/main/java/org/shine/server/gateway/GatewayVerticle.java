package org.shine.server.gateway;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.ext.web.Router;
import java.net.BindException;
import java.util.Objects;
import java.util.function.Function;
import org.shine.server.config.AppConfig;
import org.shine.server.db.StorageHealth;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.hub.HubRoutes;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.peer.ServerIdentity;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.util.Json;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP port of a node: WebSocket sessions on {@code /ws} ({@link SessionKeeper}: connection budget, timeouts,
 * congestion, draining), each text frame read by the {@link FrameReader}, dispatched by the {@link OpDispatcher} and
 * answered through the {@link ErrorEdge}; the plain endpoints ({@link HttpEndpoints}) and the hub's routes
 * ({@link HubRoutes}, built by the node) on the same router. Every instance listens on the same port; Vert.x spreads
 * connections over them.
 */
public final class GatewayVerticle extends VerticleBase {
  private static final Logger LOG = LoggerFactory.getLogger(GatewayVerticle.class);
  private final AppConfig config;
  private final ServerIdentity identity;
  private final SignatureVerifier verifier;
  private final ConnectionBudget connections;
  private final OpLimits limits;
  private final ShineMetrics metrics;
  private final StorageHealth health;
  private final SessionRegistry registry;
  private final Function<Vertx, HubRoutes> hubRoutes;
  private SessionKeeper keeper;
  private FrameReader reader;
  private OpDispatcher dispatcher;
  private ErrorEdge edge;
  private LegacyPeerAddresses legacyPeers;
  private HttpServer server;
  private long housekeeping = -1;

  /** {@code hubRoutes}: builds this instance's hub routes ({@link HubRoutes#perInstance}). */
  public GatewayVerticle(AppConfig config, ServerIdentity identity, SignatureVerifier verifier,
      ConnectionBudget connections, OpLimits limits, ShineMetrics metrics, StorageHealth health,
      SessionRegistry registry, Function<Vertx, HubRoutes> hubRoutes) {
    this.config = Objects.requireNonNull(config);
    this.identity = Objects.requireNonNull(identity);
    this.verifier = Objects.requireNonNull(verifier);
    this.connections = Objects.requireNonNull(connections);
    this.limits = Objects.requireNonNull(limits);
    this.metrics = Objects.requireNonNull(metrics);
    this.health = Objects.requireNonNull(health);
    this.registry = Objects.requireNonNull(registry);
    this.hubRoutes = Objects.requireNonNull(hubRoutes);
  }

  @Override
  public Future<?> start() {
    Frames frames = new Frames(Json.MAPPER);
    keeper = new SessionKeeper(vertx, config, connections, metrics, registry, System::nanoTime);
    reader = new FrameReader(Json.MAPPER, config.limits().maxFrameBytes());
    legacyPeers = new LegacyPeerAddresses(vertx, config);
    dispatcher = new OpDispatcher(vertx, config, identity, frames, verifier, limits, legacyPeers);
    edge = new ErrorEdge(frames, metrics, health::isUp, health::suspect, keeper::write);
    HttpEndpoints endpoints = new HttpEndpoints(vertx, identity, metrics, health, keeper::draining, keeper::refuses);
    Router router = Router.router(vertx);
    endpoints.guard(router);
    hubRoutes.apply(vertx).mount(router);
    endpoints.mount(router);
    server = vertx.createHttpServer(HttpEndpoints.serverOptions(config, keeper.backstopIdleMs()))
        .connectionHandler(keeper::onConnection).webSocketHandshakeHandler(keeper::handshake)
        .webSocketHandler(this::accept).requestHandler(router);
    housekeeping = vertx.setPeriodic(keeper.housekeepingPeriodMs(), id -> keeper.housekeeping());
    return legacyPeers.start().compose(v -> server.listen()).recover(failure -> Future.failedFuture(
        new IllegalStateException("cannot listen on " + config.http().host() + ":" + config.http().port()
            + " (http.host, http.port): " + failure.getMessage()
            + (failure instanceof BindException ? "; is another server running on that port?" : ""), failure)));
  }

  /** Drains: refuses new connections and requests, waits for in-flight requests, then closes. */
  @Override
  public Future<?> stop() {
    vertx.cancelTimer(housekeeping);
    legacyPeers.stop();
    return keeper.drain().compose(v -> server.close());
  }

  private void accept(ServerWebSocket socket) {
    Session session = keeper.open(socket);
    if (session == null) {
      return;
    }
    socket.textMessageHandler(text -> onText(session, text));
    socket.binaryMessageHandler(binary -> {
      keeper.heard(session);
      edge.fail(session, null, null, FrameReader.binary());
    });
    socket.pongHandler(pong -> keeper.heard(session));
    socket.exceptionHandler(failure -> LOG.debug("socket error [session: {}]: {}", session.who(), failure.toString()));
  }

  private void onText(Session session, String text) {
    keeper.heardRequest(session);
    FrameReader.Request request;
    try {
      request = reader.read(text);
    } catch (FrameReader.BadFrame bad) {
      edge.fail(session, bad.op(), bad.requestId(), bad);
      return;
    }
    ProtocolException refused = keeper.admit(session);
    if (refused != null) {
      edge.fail(session, request.op(), request.requestId(), refused);
      return;
    }
    dispatcher.dispatch(session, request.op(), request.payload()).onComplete(ar -> {
      keeper.finished(session);
      if (ar.succeeded()) {
        edge.answer(session, request.op(), request.requestId(), ar.result());
      } else {
        edge.fail(session, request.op(), request.requestId(), ar.cause());
      }
    });
  }
}
