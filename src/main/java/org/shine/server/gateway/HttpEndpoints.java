package org.shine.server.gateway;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.SocketAddress;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.shine.server.config.AppConfig;
import org.shine.server.db.StorageHealth;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.peer.ServerIdentity;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Status;
import org.shine.server.util.Json;
import org.shine.server.util.Liveness;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plain HTTP endpoints of the gateway's port: {@code /} (what this server is), {@code /ws} without an upgrade
 * (426), {@code /health} (liveness: every event loop answers), {@code /ready} (readiness: the database answers, not
 * draining), {@code /.well-known/shine-server}, the web chat ({@code /app}, {@link WebApp}) and {@code /metrics}; and
 * the guard that answers every request of a connection over the limits with 503; and the options of the HTTP server
 * that serves them and {@code /ws}.
 */
final class HttpEndpoints {
  /** The gateway's log lines keep the gateway's logger name (operators filter on it). */
  private static final Logger LOG = LoggerFactory.getLogger(GatewayVerticle.class);
  /** HTTP 426: {@code /ws} asked for without a WebSocket upgrade. */
  private static final int UPGRADE_REQUIRED = 426;
  private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";
  private final Vertx vertx;
  private final ServerIdentity identity;
  private final ShineMetrics metrics;
  private final StorageHealth health;
  private final Liveness liveness;
  private final BooleanSupplier draining;
  private final Predicate<SocketAddress> refused;

  /** {@code draining}: whether the gateway is shutting down; {@code refused}: whether a connection is over limits. */
  HttpEndpoints(Vertx vertx, ServerIdentity identity, ShineMetrics metrics, StorageHealth health,
      BooleanSupplier draining, Predicate<SocketAddress> refused) {
    this.vertx = Objects.requireNonNull(vertx);
    this.identity = Objects.requireNonNull(identity);
    this.metrics = Objects.requireNonNull(metrics);
    this.health = Objects.requireNonNull(health);
    this.draining = Objects.requireNonNull(draining);
    this.refused = Objects.requireNonNull(refused);
    this.liveness = new Liveness(vertx, Liveness.DEFAULT_BOUND_MS);
  }

  /**
   * The HTTP server of {@code http.host}:{@code http.port}; {@code backstopIdleMs}: when a connection that never
   * speaks is cut (sessions are timed out before, with a reason).
   */
  static HttpServerOptions serverOptions(AppConfig config, long backstopIdleMs) {
    // the hard cap only bounds memory; frames above the configured limit still get a 413 answer
    int hardCap = Math.max(config.limits().maxFrameBytes() * 4, 1 << 20);
    boolean compression = config.limits().webSocketCompression();
    return new HttpServerOptions()
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
        // every response is written on its connection's event loop (a handler that waits for work done elsewhere
        // answers back on its own context, see ready()), so a connection needs no queue for writes from other
        // threads: that queue is 4 KiB of heap per connection, and an upgraded WebSocket keeps its HTTP connection
        // for its whole life (issue 18: the heap an idle session holds)
        .setStrictThreadMode(true)
        .setReadIdleTimeout((int) Math.min(Integer.MAX_VALUE, backstopIdleMs))
        .setIdleTimeoutUnit(TimeUnit.MILLISECONDS);
  }

  /** The first route of the router: a connection over the limits gets 503 for anything it asks. */
  void guard(Router router) {
    router.route().handler(ctx -> {
      if (refused.test(ctx.request().remoteAddress())) {
        ctx.response().setStatusCode(Status.UNAVAILABLE).putHeader("connection", "close")
            .putHeader("content-type", "application/json")
            .end("{\"error\":{\"code\":\"" + ErrorCode.OVERLOADED + "\",\"message\":\"too many connections\"}}");
      } else {
        ctx.next();
      }
    });
  }

  void mount(Router router) {
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
  }

  /**
   * {@code GET /health}, liveness (PROTOCOL §11-§12): 200 UP while every event loop answers within the bound, 503
   * DOWN when one does not, 503 DRAINING while shutting down. No database check (that is readiness).
   */
  private void health(RoutingContext ctx) {
    liveness.check().onComplete(ar -> {
      Liveness.Report report = ar.result();
      String status = draining.getAsBoolean() ? "DRAINING" : report.alive() ? "UP" : "DOWN";
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
    endpoints.put("/app/", "the web chat (open it in a browser)");
    endpoints.put("/health", "liveness");
    endpoints.put("/ready", "readiness: the database answers and the server takes work");
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
    // the check may be one that another event loop started, and completes there: answer on this one
    Context here = vertx.getOrCreateContext();
    health.check().onComplete(ar -> here.runOnContext(v -> {
      boolean database = ar.succeeded() && ar.result();
      boolean shuttingDown = draining.getAsBoolean();
      String status = shuttingDown ? "DRAINING" : database ? "UP" : "DOWN";
      var body = Json.MAPPER.createObjectNode().put("status", status);
      body.putObject("checks").put("database", database ? "UP" : "DOWN")
          .put("gateway", shuttingDown ? "DRAINING" : "UP");
      if (!ctx.response().closed()) {
        ctx.response().setStatusCode(shuttingDown || !database ? Status.UNAVAILABLE : Status.OK)
            .putHeader("content-type", "application/json").putHeader("cache-control", "no-cache")
            .end(body.toString());
      }
    }));
  }

  /** {@code GET /metrics}: formatting every meter is CPU work that grows with the meters, so not on an event loop. */
  private void scrape(RoutingContext ctx, PrometheusMeterRegistry registry) {
    vertx.executeBlocking(registry::scrape, false)
        .onSuccess(text -> ctx.response().putHeader("content-type", PROMETHEUS_TEXT).end(text))
        .onFailure(ctx::fail);
  }
}
