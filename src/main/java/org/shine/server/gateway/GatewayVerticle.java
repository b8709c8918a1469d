package org.shine.server.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.ext.web.Router;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Set;
import org.shine.server.bus.BusReplies;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.hub.HubPollLimits;
import org.shine.server.hub.HubRoutes;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.Json;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The WebSocket gateway ({@code /ws}), {@code /health} and the hub's HTTP routes ({@code /hub/v1}): reads envelopes, enforces per-connection limits, hands
 * each request to the {@link OpDispatcher} and maps every failure to an error frame in one place. Every instance
 * listens on the same port; Vert.x spreads connections over them.
 */
public final class GatewayVerticle extends VerticleBase {
  private static final Logger LOG = LoggerFactory.getLogger(GatewayVerticle.class);
  private static final Set<String> ENVELOPE_FIELDS = Set.of("op", "requestId", "payload");
  private static final long DRAIN_POLL_MS = 50;
  private static final long DRAIN_LIMIT_MS = 10_000;

  private final AppConfig config;
  private final Clock clock;
  private final SignatureVerifier verifier;
  private final HubPollLimits polls;
  private final Set<Session> sessions = new HashSet<>();
  private Frames frames;
  private OpDispatcher dispatcher;
  private HttpServer server;
  private boolean draining;

  public GatewayVerticle(AppConfig config, Clock clock, SignatureVerifier verifier, HubPollLimits polls) {
    this.config = config;
    this.clock = clock;
    this.verifier = verifier;
    this.polls = polls;
  }

  @Override
  public Future<?> start() {
    frames = new Frames(Json.MAPPER);
    dispatcher = new OpDispatcher(vertx, config, frames);
    Router router = Router.router(vertx);
    new HubRoutes(vertx, config, Database.sharedPool(vertx, config.db()), clock, verifier, polls).mount(router);
    router.get("/health").handler(ctx -> ctx.response()
        .setStatusCode(draining ? 503 : 200)
        .putHeader("content-type", "application/json")
        .end(draining ? "{\"status\":\"DRAINING\"}" : "{\"status\":\"UP\"}"));
    // the hard cap only bounds memory; frames above the configured limit still get a 413 answer
    int hardCap = Math.max(config.limits().maxFrameBytes() * 4, 1 << 20);
    HttpServerOptions options = new HttpServerOptions()
        .setHost(config.http().host())
        .setPort(config.http().port())
        .setMaxWebSocketFrameSize(hardCap)
        .setMaxWebSocketMessageSize(hardCap);
    server = vertx.createHttpServer(options)
        .webSocketHandler(this::accept)
        .requestHandler(router);
    return server.listen();
  }

  /** Drains: refuses new connections and requests, waits for in-flight requests, then closes. */
  @Override
  public Future<?> stop() {
    draining = true;
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

  private void accept(ServerWebSocket socket) {
    if (!"/ws".equals(socket.path())) {
      socket.close((short) 1008, "unknown path; use /ws");
      return;
    }
    if (draining) {
      socket.close((short) 1001, "server is shutting down");
      return;
    }
    Session session = new Session(socket);
    sessions.add(session);
    socket.textMessageHandler(text -> onText(session, text));
    socket.binaryMessageHandler(binary -> reply(session, null, null, ProtocolException.badRequest(
        ErrorCode.BAD_ENVELOPE, "binary frames are not supported; send JSON text frames")));
    socket.closeHandler(v -> close(session));
    socket.exceptionHandler(failure -> LOG.debug("socket error [login: {}]: {}", session.login, failure.toString()));
  }

  private void close(Session session) {
    sessions.remove(session);
    if (session.events != null) {
      session.events.unregister();
    }
  }

  private void onText(Session session, String text) {
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
      if (ar.succeeded()) {
        write(session, frames.response(op, requestId, ar.result()));
      } else {
        reply(session, op, requestId, ar.cause());
      }
    });
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

  private void reply(Session session, String op, JsonNode requestId, Throwable failure) {
    ProtocolException error = BusReplies.asProtocolException(failure);
    if (error.status() >= Status.INTERNAL) {
      LOG.warn("request failed [op: {}, login: {}, status: {}, code: {}]", op, session.login, error.status(),
          error.code());
    } else {
      LOG.debug("request refused [op: {}, login: {}, status: {}, code: {}]: {}", op, session.login, error.status(),
          error.code(), error.getMessage());
    }
    write(session, frames.error(op, requestId, error.status(), error.code(), error.getMessage()));
  }

  private static void write(Session session, String frame) {
    if (!session.socket.isClosed()) {
      session.socket.writeTextMessage(frame);
    }
  }
}
