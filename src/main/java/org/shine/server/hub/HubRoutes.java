package org.shine.server.hub;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.sqlclient.Pool;
import java.time.Clock;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import org.shine.server.bus.Failures;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.HubRepository;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Fields;
import org.shine.server.protocol.JsonText;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.Challenges;
import org.shine.server.util.Json;
import org.shine.server.util.PerKeyLimit;
import org.shine.server.util.PerKeyRate;

/**
 * The hub's HTTP API (PROTOCOL §10, seed 004), a set of routes the gateway's HTTP server mounts: reads each request's query, headers
 * and body, hands it to the {@link HubService} (challenge and token issue, refresh with rotation by
 * {@link HubTokens}, the long-/short-poll of one event at a time with explicit ACK, the cards the adapter verifies
 * events with) and renders its answer or error.
 * One instance per gateway verticle instance, built by the node ({@link #perInstance}) and handed to the gateway.
 */
public final class HubRoutes {
  private static final int MAX_BODY_BYTES = 16 * 1024;
  /** Set on a request once a hub handler took it (past the body handler). */
  private static final String HANDLED = "hub.handled";
  private final AppConfig.Hub config;
  private final HubService hub;

  /** {@code config}: for the longest wait of a poll ({@code hub.maxWaitS}). */
  public HubRoutes(AppConfig.Hub config, HubService hub) {
    this.config = Objects.requireNonNull(config);
    this.hub = Objects.requireNonNull(hub);
  }

  /**
   * Builds the routes of one gateway instance from the Vert.x it runs on, when it starts, over the node's one pool and
   * its one repository of users. {@code polls}: the open polls per user of this node, shared by its gateway instances,
   * as is the rate of card reads per user made here.
   */
  public static Function<Vertx, HubRoutes> perInstance(AppConfig config, Clock clock, SignatureVerifier verifier,
      PerKeyLimit polls, Pool pool, DirectoryRepository users) {
    Objects.requireNonNull(config);
    Objects.requireNonNull(clock);
    Objects.requireNonNull(verifier);
    Objects.requireNonNull(polls);
    Objects.requireNonNull(pool);
    Objects.requireNonNull(users);
    PerKeyRate cardReads = HubService.cardReadRate(clock);
    return vertx -> new HubRoutes(config.hub(), new HubService(vertx, config, pool, users, clock, verifier, polls,
        cardReads));
  }

  /** Adds the routes under {@code /hub/v1} to {@code router}. */
  public void mount(Router router) {
    router.route("/hub/v1/*").handler(BodyHandler.create(false).setBodyLimit(MAX_BODY_BYTES))
        .failureHandler(HubRoutes::failed);
    router.get("/hub/v1/challenge").handler(ctx -> respond(ctx, () -> challenge(ctx)));
    router.post("/hub/v1/token").handler(ctx -> respond(ctx, () -> token(ctx)));
    router.post("/hub/v1/token/refresh").handler(ctx -> respond(ctx, () -> refresh(ctx)));
    router.get("/hub/v1/messages").handler(ctx -> {
      ctx.put(HANDLED, true);
      messages(ctx);
    });
    router.post("/hub/v1/ack/:deliveryId").handler(ctx -> respond(ctx, () -> ack(ctx)));
    router.get("/hub/v1/cards/:login").handler(ctx -> respond(ctx, () -> card(ctx)));
    router.route("/hub/v1/*").handler(ctx -> {
      ctx.put(HANDLED, true);
      fail(ctx, new ProtocolException(405, ErrorCode.METHOD_NOT_ALLOWED,
          ctx.request().method() + " is not allowed on " + ctx.request().path()));
    });
  }

  private Future<JsonNode> challenge(RoutingContext ctx) {
    String login = ctx.request().getParam("login");
    ObjectNode query = Json.MAPPER.createObjectNode();
    if (login != null) {
      query.put("login", login);
    }
    String checked = Fields.of(query, "query", Set.of("login")).login("login");
    return hub.challenge(checked).map(challenge -> Json.MAPPER.createObjectNode()
        .put("challengeB64", challenge.challengeB64()).put("serverLogin", challenge.serverLogin()));
  }

  private Future<JsonNode> token(RoutingContext ctx) {
    Fields fields = Fields.of(jsonBody(ctx), "body", Set.of("login", "challengeB64", "signatureB64"));
    String login = fields.login("login");
    String challengeB64 = fields.requiredString("challengeB64");
    // the challenge is looked up as text: only what a challenge can be reaches the database
    fields.base64("challengeB64", Challenges.BYTES);
    byte[] signature = fields.base64("signatureB64", Ed25519Signer.SIGNATURE_SIZE);
    return hub.issueTokens(login, challengeB64, signature).map(HubRoutes::render);
  }

  private Future<JsonNode> refresh(RoutingContext ctx) {
    String refreshToken = Fields.of(jsonBody(ctx), "body", Set.of("refreshToken")).requiredString("refreshToken");
    return hub.refresh(refreshToken).map(HubRoutes::render);
  }

  private static JsonNode render(HubTokens.Pair pair) {
    return Json.MAPPER.createObjectNode().put("accessToken", pair.accessToken())
        .put("refreshToken", pair.refreshToken()).put("expiresInS", pair.expiresInS());
  }

  private void messages(RoutingContext ctx) {
    long waitS;
    String waitParam = ctx.request().getParam("waitS");
    try {
      waitS = waitParam == null ? config.maxWaitS() : Long.parseLong(waitParam);
      if (waitS < 0) {
        throw new NumberFormatException();
      }
    } catch (NumberFormatException e) {
      fail(ctx, ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "waitS must be a whole number of seconds"));
      return;
    }
    long wait = Math.min(waitS, config.maxWaitS());
    authenticate(ctx).compose(token -> hub.poll(token, wait)).onComplete(ar -> {
      if (ar.failed()) {
        fail(ctx, ar.cause());
      } else if (ar.result().isPresent()) {
        ctx.response().setStatusCode(200).putHeader("content-type", "application/json")
            .putHeader("X-Delivery-Id", Long.toString(ar.result().get().deliveryId())).end(ar.result().get().body());
      } else {
        ctx.response().setStatusCode(wait == 0 ? 204 : 408).end();
      }
    });
  }

  private Future<JsonNode> ack(RoutingContext ctx) {
    long deliveryId;
    try {
      deliveryId = Long.parseLong(ctx.pathParam("deliveryId"));
    } catch (NumberFormatException e) {
      return Future.failedFuture(new ProtocolException(Status.NOT_FOUND, ErrorCode.UNKNOWN_DELIVERY,
          "no such delivery id"));
    }
    return authenticate(ctx).compose(token -> hub.ack(token, deliveryId))
        .map(v -> Json.MAPPER.createObjectNode().put("deliveryId", deliveryId).put("acked", true));
  }

  /** The stored card of a login, so that the adapter verifies what it receives (PROTOCOL §4 v3 "Hub adapter"). */
  private Future<JsonNode> card(RoutingContext ctx) {
    return authenticate(ctx).compose(token -> {
      String login = Fields.of(Json.MAPPER.createObjectNode().put("login", ctx.pathParam("login")), "path",
          Set.of("login")).login("login");
      return hub.card(token, login);
    }).map(card -> {
      ObjectNode body = Json.MAPPER.createObjectNode();
      body.set("card", card);
      return body;
    });
  }

  private Future<HubRepository.StoredToken> authenticate(RoutingContext ctx) {
    String header = ctx.request().getHeader("Authorization");
    if (header == null || !header.startsWith("Bearer ") || header.length() <= 7) {
      return Future.failedFuture(new ProtocolException(Status.UNAUTHORIZED, ErrorCode.INVALID_TOKEN,
          "an Authorization: Bearer <accessToken> header is required"));
    }
    return hub.authenticate(header.substring(7).trim());
  }

  private static JsonNode jsonBody(RoutingContext ctx) {
    try {
      String text = ctx.body() == null ? null : ctx.body().asString();
      JsonNode body = text == null || text.isBlank() ? null : Json.MAPPER.readTree(text);
      if (body == null || !body.isObject()) {
        throw ProtocolException.badRequest(ErrorCode.BAD_JSON, "the body must be a JSON object");
      }
      if (JsonText.hasUnpairedSurrogate(body)) {
        throw ProtocolException.badRequest(ErrorCode.BAD_JSON,
            "a string in the body holds an unpaired surrogate escape (\\uD800-\\uDFFF): not Unicode text");
      }
      return body;
    } catch (JsonProcessingException e) {
      throw ProtocolException.badRequest(ErrorCode.BAD_JSON, "the body is not valid JSON: "
          + e.getOriginalMessage());
    }
  }

  private static void respond(RoutingContext ctx, Supplier<Future<JsonNode>> handler) {
    ctx.put(HANDLED, true);
    Future<JsonNode> work;
    try {
      work = handler.get();
    } catch (ProtocolException e) {
      work = Future.failedFuture(e);
    }
    work.onSuccess(body -> ctx.response().setStatusCode(200).putHeader("content-type", "application/json")
        .end(body.toString())).onFailure(failure -> fail(ctx, failure));
  }

  /**
   * A request the body handler refused is the client's error, answered like every other hub error (without this the
   * router answers in plain text, or 500, and logs each one at ERROR): over {@value #MAX_BODY_BYTES} bytes, or a
   * body the form decoder cannot take (sent as a form; the hub reads JSON bodies only). A failure before any hub
   * handler ran can only be the body handler's.
   */
  private static void failed(RoutingContext ctx) {
    if (ctx.failure() == null && ctx.statusCode() == Status.TOO_LARGE) {
      fail(ctx, new ProtocolException(Status.TOO_LARGE, ErrorCode.BODY_TOO_LARGE,
          "the request body exceeds " + MAX_BODY_BYTES + " bytes"));
    } else if (ctx.get(HANDLED) == null) {
      fail(ctx, ProtocolException.badRequest(ErrorCode.BAD_JSON,
          "the body could not be read; send one JSON object as application/json"));
    } else if (ctx.failure() != null) {
      fail(ctx, ctx.failure());
    } else {
      ctx.next();
    }
  }

  private static void fail(RoutingContext ctx, Throwable failure) {
    ProtocolException error = Failures.classify(failure);
    HttpServerResponse response = ctx.response();
    if (response.ended() || response.closed()) {
      return;
    }
    ObjectNode body = Json.MAPPER.createObjectNode();
    body.putObject("error").put("code", error.code()).put("message", error.getMessage());
    response.setStatusCode(error.status()).putHeader("content-type", "application/json").end(body.toString());
  }
}
