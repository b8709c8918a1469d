package org.shine.server.hub;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.sqlclient.Pool;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Base64;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.HubRepository;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Fields;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.Challenges;
import org.shine.server.util.Json;
import org.shine.server.util.PerKeyLimit;

/**
 * The hub's HTTP API (PROTOCOL §10, seed 004), mounted on the gateway's router: challenge and token issue,
 * refresh with rotation ({@link HubTokens}: a retry within the grace gets the same pair, other reuse revokes the
 * whole family), and the long-/short-poll of one event at a time with explicit ACK. A waiting poll holds no thread:
 * it waits for a wake-up on the bus (from any node) or for its timer. One instance per gateway verticle instance.
 */
public final class HubRoutes {
  private static final int MAX_BODY_BYTES = 16 * 1024;
  private static final long CHALLENGE_TTL_MS = 120_000;
  private final Vertx vertx;
  private final AppConfig config;
  private final HubRepository hub;
  private final DirectoryRepository directory;
  private final Clock clock;
  private final SignatureVerifier verifier;
  private final PerKeyLimit polls;
  private final HubTokens tokens;

  public HubRoutes(Vertx vertx, AppConfig config, Pool pool, Clock clock, SignatureVerifier verifier,
      PerKeyLimit polls) {
    this.vertx = Objects.requireNonNull(vertx);
    this.config = Objects.requireNonNull(config);
    this.hub = new HubRepository(pool);
    this.directory = new DirectoryRepository(pool);
    this.clock = Objects.requireNonNull(clock);
    this.verifier = Objects.requireNonNull(verifier);
    this.polls = Objects.requireNonNull(polls);
    this.tokens = new HubTokens(pool, config.hub(), clock);
  }

  public void mount(Router router) {
    router.route("/hub/v1/*").handler(BodyHandler.create(false).setBodyLimit(MAX_BODY_BYTES));
    router.get("/hub/v1/challenge").handler(ctx -> respond(ctx, () -> challenge(ctx)));
    router.post("/hub/v1/token").handler(ctx -> respond(ctx, () -> token(ctx)));
    router.post("/hub/v1/token/refresh").handler(ctx -> respond(ctx, () -> refresh(ctx)));
    router.get("/hub/v1/messages").handler(this::messages);
    router.post("/hub/v1/ack/:deliveryId").handler(ctx -> respond(ctx, () -> ack(ctx)));
    router.route("/hub/v1/*").handler(ctx -> fail(ctx, new ProtocolException(405, ErrorCode.METHOD_NOT_ALLOWED,
        ctx.request().method() + " is not allowed on " + ctx.request().path())));
  }

  private Future<JsonNode> challenge(RoutingContext ctx) {
    String login = ctx.request().getParam("login");
    ObjectNode query = Json.MAPPER.createObjectNode();
    if (login != null) {
      query.put("login", login);
    }
    String checked = Fields.of(query, "query", Set.of("login")).login("login");
    return servedUser(checked).compose(user -> {
      String challengeB64 = Challenges.newChallengeB64();
      return hub.saveChallenge(challengeB64, checked, clock.millis() + CHALLENGE_TTL_MS,
          config.hub().challengesPerLogin())
          .map(v -> Json.MAPPER.createObjectNode().put("challengeB64", challengeB64)
              .put("serverLogin", config.serverLogin()));
    });
  }

  private Future<JsonNode> token(RoutingContext ctx) {
    Fields fields = Fields.of(jsonBody(ctx), "body", Set.of("login", "challengeB64", "signatureB64"));
    String login = fields.login("login");
    String challengeB64 = fields.requiredString("challengeB64");
    byte[] signature = fields.base64("signatureB64", Ed25519Signer.SIGNATURE_SIZE);
    byte[] signed = ("SHiNE_HUB|" + config.serverLogin() + "|" + challengeB64).getBytes(StandardCharsets.UTF_8);
    return servedUser(login).compose(user -> hub.takeChallenge(challengeB64, login, clock.millis())
        .compose(live -> {
          if (!live) {
            return Future.failedFuture(new ProtocolException(Status.UNAUTHORIZED, ErrorCode.NO_CHALLENGE,
                "no live challenge was issued to " + login + " with that value"));
          }
          return verifier.check(() -> user.verifier().verify(signed, 0, signed.length, signature, 0))
              .compose(valid -> valid ? hub.subscribe(login, clock.millis())
                  : Future.failedFuture(new ProtocolException(Status.UNAUTHORIZED, ErrorCode.BAD_SIGNATURE,
                      "the challenge signature does not verify with " + login + "'s key")))
              .onSuccess(v -> vertx.eventBus().publish(Addresses.HUB_SUBSCRIBED, login))
              .compose(v -> tokens.issue(login)).map(HubRoutes::render);
        }));
  }

  private Future<JsonNode> refresh(RoutingContext ctx) {
    String refreshToken = Fields.of(jsonBody(ctx), "body", Set.of("refreshToken")).requiredString("refreshToken");
    return tokens.refresh(refreshToken).map(HubRoutes::render);
  }

  private static JsonNode render(HubTokens.Pair pair) {
    return Json.MAPPER.createObjectNode().put("accessToken", pair.accessToken())
        .put("refreshToken", pair.refreshToken()).put("expiresInS", pair.expiresInS());
  }

  private void messages(RoutingContext ctx) {
    long waitS;
    String waitParam = ctx.request().getParam("waitS");
    try {
      waitS = waitParam == null ? config.hub().maxWaitS() : Long.parseLong(waitParam);
      if (waitS < 0) {
        throw new NumberFormatException();
      }
    } catch (NumberFormatException e) {
      fail(ctx, ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "waitS must be a whole number of seconds"));
      return;
    }
    long wait = Math.min(waitS, config.hub().maxWaitS());
    authenticate(ctx).onFailure(failure -> fail(ctx, failure)).onSuccess(token -> {
      if (!polls.tryAcquire(token.login())) {
        fail(ctx, new ProtocolException(Status.TOO_MANY_REQUESTS, ErrorCode.TOO_MANY_IN_FLIGHT,
            "more than " + polls.perKey() + " polls of one user at once on this server"));
        return;
      }
      // never hold the poll past the access token's life
      long holdMs = Math.max(0, Math.min(wait * 1000, token.expiresAtMs() - clock.millis()));
      poll(token.login(), holdMs).onComplete(ar -> {
        polls.release(token.login());
        if (ar.failed()) {
          fail(ctx, ar.cause());
        } else if (ar.result() != null) {
          ctx.response().setStatusCode(200).putHeader("content-type", "application/json")
              .putHeader("X-Delivery-Id", Long.toString(ar.result().deliveryId())).end(ar.result().body());
        } else {
          ctx.response().setStatusCode(wait == 0 ? 204 : 408).end();
        }
      });
    });
  }

  /** The next event, or null once {@code holdMs} has passed without one. */
  private Future<HubRepository.QueuedEvent> poll(String login, long holdMs) {
    long visibilityMs = config.hub().visibilityTimeoutS() * 1000;
    return hub.takeHead(login, clock.millis(), visibilityMs).compose(head -> {
      if (head.isPresent() || holdMs == 0) {
        return Future.succeededFuture(head.orElse(null));
      }
      Promise<HubRepository.QueuedEvent> result = Promise.promise();
      MessageConsumer<String> wake = vertx.eventBus().consumer(Addresses.hubWake(login));
      Runnable retry = () -> {
        if (result.future().isComplete()) {
          return;
        }
        hub.takeHead(login, clock.millis(), visibilityMs).onComplete(ar -> {
          if (ar.failed()) {
            result.tryFail(ar.cause());
          } else if (ar.result().isPresent() && !result.tryComplete(ar.result().get())) {
            // the wait ended while this look was in flight: give the event back rather than hide it unseen
            hub.release(ar.result().get().deliveryId());
          }
        });
      };
      wake.handler(m -> retry.run());
      // a handed-out event whose visibility ends while we wait must be found too: look again now and then
      long recheck = vertx.setPeriodic(Math.max(100, Math.min(visibilityMs, 1000)), id -> retry.run());
      long end = vertx.setTimer(holdMs, id -> result.tryComplete(null));
      return wake.completion().compose(v -> {
        retry.run();
        return result.future();
      }).onComplete(ar -> {
        vertx.cancelTimer(recheck);
        vertx.cancelTimer(end);
        wake.unregister();
      });
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
    return authenticate(ctx).compose(token -> hub.ack(deliveryId, token.login())).compose(found -> found
        ? Future.succeededFuture(Json.MAPPER.createObjectNode().put("deliveryId", deliveryId).put("acked", true))
        : Future.failedFuture(new ProtocolException(Status.NOT_FOUND, ErrorCode.UNKNOWN_DELIVERY,
            "no delivery " + deliveryId + " for this user")));
  }

  private Future<HubRepository.StoredToken> authenticate(RoutingContext ctx) {
    String header = ctx.request().getHeader("Authorization");
    if (header == null || !header.startsWith("Bearer ") || header.length() <= 7) {
      return Future.failedFuture(new ProtocolException(Status.UNAUTHORIZED, ErrorCode.INVALID_TOKEN,
          "an Authorization: Bearer <accessToken> header is required"));
    }
    return hub.findToken(HubTokens.hash(header.substring(7).trim())).compose(token -> {
      if (token.isEmpty() || !"access".equals(token.get().kind()) || token.get().revoked()
          || token.get().expiresAtMs() <= clock.millis()) {
        return Future.failedFuture(new ProtocolException(Status.UNAUTHORIZED, ErrorCode.INVALID_TOKEN,
            "the access token is unknown, expired or revoked"));
      }
      return Future.succeededFuture(token.get());
    });
  }

  private Future<DirectoryRepository.StoredUser> servedUser(String login) {
    return directory.find(login).compose(found -> {
      if (found.isEmpty()) {
        return Future.failedFuture(new ProtocolException(Status.NOT_FOUND, ErrorCode.USER_NOT_FOUND,
            "unknown user " + login));
      }
      if (!found.get().servedBy(config.serverLogin())) {
        return Future.failedFuture(new ProtocolException(Status.MISDIRECTED, ErrorCode.NOT_ACCESS_SERVER,
            config.serverLogin() + " is not an access server of " + login));
      }
      return Future.succeededFuture(found.get());
    });
  }

  private static JsonNode jsonBody(RoutingContext ctx) {
    try {
      String text = ctx.body() == null ? null : ctx.body().asString();
      JsonNode body = text == null || text.isBlank() ? null : Json.MAPPER.readTree(text);
      if (body == null || !body.isObject()) {
        throw ProtocolException.badRequest(ErrorCode.BAD_JSON, "the body must be a JSON object");
      }
      return body;
    } catch (JsonProcessingException e) {
      throw ProtocolException.badRequest(ErrorCode.BAD_JSON, "the body is not valid JSON: "
          + e.getOriginalMessage());
    }
  }

  private static void respond(RoutingContext ctx, Supplier<Future<JsonNode>> handler) {
    Future<JsonNode> work;
    try {
      work = handler.get();
    } catch (ProtocolException e) {
      work = Future.failedFuture(e);
    }
    work.onSuccess(body -> ctx.response().setStatusCode(200).putHeader("content-type", "application/json")
        .end(body.toString())).onFailure(failure -> fail(ctx, failure));
  }

  private static void fail(RoutingContext ctx, Throwable failure) {
    ProtocolException error = BusReplies.asProtocolException(failure);
    HttpServerResponse response = ctx.response();
    if (response.ended() || response.closed()) {
      return;
    }
    ObjectNode body = Json.MAPPER.createObjectNode();
    body.putObject("error").put("code", error.code()).put("message", error.getMessage());
    response.setStatusCode(error.status()).putHeader("content-type", "application/json").end(body.toString());
  }
}
