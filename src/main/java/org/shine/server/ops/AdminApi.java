package org.shine.server.ops;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.time.Clock;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.bus.Failures;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.InviteRepository;
import org.shine.server.db.OpsRepository;
import org.shine.server.db.QuarantineRepository;
import org.shine.server.directory.InviteCodes;
import org.shine.server.dm.Logins;
import org.shine.server.gateway.SessionRegistry;
import org.shine.server.model.StoredUser;
import org.shine.server.model.UserCard;
import org.shine.server.peer.PeerStatus;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolErrors;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.Json;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin API of one node (PROTOCOL §12), JSON over HTTP on the loopback listener of {@code admin}:
 * {@code GET /admin/v1/peers}, {@code GET /admin/v1/deliveries?state=accepted|failed&limit=N},
 * {@code POST /admin/v1/deliveries/retry-peer/{serverLogin}}, {@code GET /admin/v1/users/{login}} and
 * {@code GET /admin/v1/sync-quarantine?owner=L&limit=N&afterId=I} (PROTOCOL §8 v3) and
 * {@code POST /admin/v1/invites?expiresInS=N} (PROTOCOL §13: a one-time invite code). Errors answer
 * {@code {"error":{"code","message"}}} with the status of PROTOCOL §2.
 */
public final class AdminApi {
  /** Prefix of every admin route. */
  public static final String PREFIX = "/admin/v1";
  static final int DEFAULT_LIMIT = 50;
  static final int MAX_LIMIT = 1_000;
  private static final Logger LOG = LoggerFactory.getLogger(AdminApi.class);
  private final Vertx vertx;
  private final AppConfig config;
  private final OpsRepository ops;
  private final DirectoryRepository directory;
  private final SessionRegistry sessions;
  private final QuarantineRepository quarantine;
  private final InviteRepository invites;
  private final Clock clock;

  public AdminApi(Vertx vertx, OpsServices services) {
    this.vertx = Objects.requireNonNull(vertx);
    this.quarantine = services.quarantine();
    this.config = services.config();
    this.ops = services.ops();
    this.directory = services.users();
    this.sessions = services.sessions();
    this.invites = services.invites();
    this.clock = services.clock();
  }

  /** A router serving the endpoints. */
  public Router router() {
    Router router = Router.router(vertx);
    router.get(PREFIX).handler(ctx -> answer(ctx, Future.succeededFuture(index())));
    router.get(PREFIX + "/").handler(ctx -> answer(ctx, Future.succeededFuture(index())));
    router.get(PREFIX + "/peers").handler(ctx -> answer(ctx, peers()));
    router.get(PREFIX + "/deliveries").handler(ctx -> answer(ctx, deliveries(ctx)));
    router.post(PREFIX + "/deliveries/retry-peer/:serverLogin")
        .handler(ctx -> answer(ctx, retryPeer(ctx.pathParam("serverLogin"))));
    router.get(PREFIX + "/users/:login").handler(ctx -> answer(ctx, user(ctx.pathParam("login"))));
    router.get(PREFIX + "/sync-quarantine").handler(ctx -> answer(ctx, syncQuarantine(ctx)));
    router.post(PREFIX + "/invites").handler(ctx -> answer(ctx, invite(ctx)));
    router.route().last().handler(ctx -> error(ctx, new ProtocolException(Status.NOT_FOUND, ErrorCode.UNKNOWN_OP,
        "no admin endpoint " + ctx.request().method() + " " + ctx.request().path() + "; see " + PREFIX
            + "/peers, /deliveries, /deliveries/retry-peer/{serverLogin}, /users/{login}, /sync-quarantine,"
            + " POST /invites")));
    return router;
  }

  /** {@code GET /admin/v1}: the endpoints, so the URL a start prints answers something useful. */
  private JsonNode index() {
    ObjectNode body = Json.MAPPER.createObjectNode().put("serverLogin", config.serverLogin());
    ObjectNode endpoints = body.putObject("endpoints");
    endpoints.put("GET " + PREFIX + "/peers", "each peer: connected, up or held down, calls in flight");
    endpoints.put("GET " + PREFIX + "/deliveries?state=accepted|delivered|failed", "delivery rows in a state");
    endpoints.put("POST " + PREFIX + "/deliveries/retry-peer/{serverLogin}", "attempt now what waits for that server");
    endpoints.put("GET " + PREFIX + "/users/{login}", "a user's card, routes, sessions and unsynced items");
    endpoints.put("GET " + PREFIX + "/sync-quarantine", "items a sibling sent that could not be stored");
    endpoints.put("POST " + PREFIX + "/invites?expiresInS=N", "a registration invite");
    return body;
  }

  private Future<JsonNode> peers() {
    return BusReplies.<PeerStatus.All>request(vertx.eventBus(), Addresses.PEER_STATUS, "").map(all -> {
      ObjectNode body = Json.MAPPER.createObjectNode().put("serverLogin", config.serverLogin());
      ArrayNode list = body.putArray("peers");
      for (PeerStatus peer : all.peers()) {
        list.addObject().put("serverLogin", peer.serverLogin()).put("url", peer.url())
            .put("configured", peer.configured()).put("connected", peer.connected())
            .put("authenticated", peer.authenticated()).put("down", peer.down())
            .put("lastError", peer.lastError()).put("backoffMs", peer.backoffMs())
            .put("inFlight", peer.inFlight()).put("waiting", peer.waiting());
      }
      return body;
    });
  }

  private Future<JsonNode> deliveries(RoutingContext ctx) {
    String state = ctx.queryParams().get("state") == null ? "accepted" : ctx.queryParams().get("state");
    if (!state.equals("accepted") && !state.equals("failed")) {
      return Future.failedFuture(ProtocolException.badRequest(ErrorCode.INVALID_FIELD,
          "state must be accepted or failed"));
    }
    int limit;
    try {
      limit = (int) number(ctx, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
    } catch (ProtocolException e) {
      return Future.failedFuture(e);
    }
    return ops.deliveries(state, limit).map(rows -> {
      ObjectNode body = Json.MAPPER.createObjectNode().put("state", state);
      ArrayNode list = body.putArray("deliveries");
      for (OpsRepository.DeliveryRow row : rows) {
        String[] parts = row.baseKey().split("\\|", -1);
        ObjectNode item = list.addObject().put("baseKey", row.baseKey()).put("revision", row.revision())
            .put("owner", row.owner()).put("recipient", parts.length > 1 ? parts[1] : "")
            .put("state", row.state()).put("acceptedAtMs", row.acceptedAtMs()).put("attempts", row.attempts())
            .put("updatedAtMs", row.updatedAtMs());
        if (row.nextAttemptAtMs() == null) {
          item.putNull("nextAttempt").putNull("nextAttemptAtMs");
        } else {
          item.put("nextAttempt", row.attempts() + 1).put("nextAttemptAtMs", row.nextAttemptAtMs());
        }
      }
      return body;
    });
  }

  /**
   * PROTOCOL §8 v3: the quarantined sync items, oldest first, of one owner or all, after {@code afterId}; at most
   * {@code limit} and, past the first, no more than {@code limits.maxResponseBytes} of items. {@code nextAfterId}
   * continues the listing when more may follow.
   */
  private Future<JsonNode> syncQuarantine(RoutingContext ctx) {
    String owner = ctx.queryParams().get("owner");
    int limit;
    long afterId;
    try {
      if (owner != null && !Logins.isValid(owner)) {
        throw ProtocolException.badRequest(ErrorCode.INVALID_LOGIN, "not a login: " + owner);
      }
      limit = (int) number(ctx, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
      afterId = number(ctx, "afterId", 0, 0, Long.MAX_VALUE);
    } catch (ProtocolException e) {
      return Future.failedFuture(e);
    }
    return quarantine.list(owner, afterId, limit).map(entries -> {
      ObjectNode body = Json.MAPPER.createObjectNode();
      if (owner != null) {
        body.put("owner", owner);
      }
      ArrayNode items = body.putArray("items");
      long bytes = 0;
      int shown = 0;
      for (QuarantineRepository.Entry entry : entries) {
        bytes += entry.itemJson().length() + entry.detail().length();
        if (shown > 0 && bytes > config.limits().maxResponseBytes()) {
          break;
        }
        items.add(render(entry));
        shown++;
      }
      if (shown < entries.size() || entries.size() == limit) {
        body.put("nextAfterId", entries.get(shown - 1).id());
      } else {
        body.putNull("nextAfterId");
      }
      return body;
    });
  }

  private static ObjectNode render(QuarantineRepository.Entry entry) {
    ObjectNode item = Json.MAPPER.createObjectNode().put("id", entry.id()).put("owner", entry.owner())
        .put("author", entry.author()).put("sourceServerLogin", entry.sourceServer()).put("op", entry.op())
        .put("type", entry.itemType()).put("syncId", entry.sourceSyncId()).put("reason", entry.reason())
        .put("detail", entry.detail()).put("receivedAtMs", entry.receivedAtMs())
        .put("checkedAtMs", entry.checkedAtMs()).put("truncated", entry.truncated());
    try {
      item.set("item", entry.truncated() ? Json.MAPPER.getNodeFactory().textNode(entry.itemJson())
          : Json.MAPPER.readTree(entry.itemJson()));
    } catch (JsonProcessingException e) {
      item.put("item", entry.itemJson());
    }
    return item;
  }

  /** A whole-number query parameter from {@code min} to {@code max}; {@code fallback} when absent. */
  private static long number(RoutingContext ctx, String name, long fallback, long min, long max) {
    String given = ctx.queryParams().get(name);
    if (given == null) {
      return fallback;
    }
    try {
      long value = Long.parseLong(given);
      if (value >= min && value <= max) {
        return value;
      }
    } catch (NumberFormatException e) {
      // answered below
    }
    throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD, name + " must be a number from " + min + " to "
        + max);
  }

  /** PROTOCOL §12 "retry peer now": the extra attempt of §7.6, as if that server had just come back. */
  private Future<JsonNode> retryPeer(String serverLogin) {
    if (!Logins.isValid(serverLogin)) {
      return Future.failedFuture(ProtocolException.badRequest(ErrorCode.INVALID_LOGIN, "not a serverLogin: "
          + serverLogin));
    }
    Optional<AppConfig.Peer> configured = config.peer(serverLogin);
    Future<Optional<String>> url = configured.isPresent() ? Future.succeededFuture(Optional.of(configured.get().url()))
        : ops.routedUrlOf(serverLogin);
    return url.compose(found -> {
      if (found.isEmpty()) {
        return Future.failedFuture(new ProtocolException(Status.NOT_FOUND, ErrorCode.UNKNOWN_SERVER,
            serverLogin + " is neither a configured peer nor named in any current route"));
      }
      return BusReplies.<Integer>request(vertx.eventBus(), Addresses.RETRY_PEER_NOW, found.get())
          .map(claimed -> {
            LOG.info("admin: retry peer now [serverLogin: {}, url: {}, claimed: {}]", serverLogin, found.get(),
                claimed);
            return (JsonNode) Json.MAPPER.createObjectNode().put("serverLogin", serverLogin).put("url", found.get())
                .put("claimed", claimed);
          });
    });
  }

  /**
   * A one-time invite code for {@code directory.registration} "invite" (PROTOCOL §13), valid {@code expiresInS}
   * (60 s to 7 days, default 7 days). The code is answered once and only its hash is stored.
   */
  private Future<JsonNode> invite(RoutingContext ctx) {
    long lifetimeS;
    try {
      String given = ctx.queryParams().get("expiresInS");
      lifetimeS = given == null ? InviteCodes.MAX_LIFETIME_S : Long.parseLong(given);
    } catch (NumberFormatException e) {
      lifetimeS = -1;
    }
    if (lifetimeS < InviteCodes.MIN_LIFETIME_S || lifetimeS > InviteCodes.MAX_LIFETIME_S) {
      return Future.failedFuture(ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "expiresInS must be a number"
          + " from " + InviteCodes.MIN_LIFETIME_S + " to " + InviteCodes.MAX_LIFETIME_S + " (7 days)"));
    }
    String code = InviteCodes.mint();
    long now = clock.millis();
    long expiresAtMs = now + lifetimeS * 1000;
    long expiresInS = lifetimeS;
    return invites.create(InviteCodes.hash(code), now, expiresAtMs).map(v -> {
      LOG.info("admin: invite code made [expiresAtMs: {}, registration: {}]", expiresAtMs,
          config.directory().registration());
      return (JsonNode) Json.MAPPER.createObjectNode().put("code", code).put("expiresAtMs", expiresAtMs)
          .put("expiresInS", expiresInS)
          .put("registration", config.directory().registration().name().toLowerCase(Locale.ROOT));
    });
  }

  private Future<JsonNode> user(String login) {
    if (!Logins.isValid(login)) {
      return Future.failedFuture(ProtocolException.badRequest(ErrorCode.INVALID_LOGIN, "not a login: " + login));
    }
    return directory.find(login).compose(found -> {
      if (found.isEmpty()) {
        return Future.failedFuture(ProtocolErrors.userNotFound(login));
      }
      StoredUser user = found.get();
      return ops.unsyncedOf(login, config.serverLogin()).map(unsynced -> render(user, unsynced));
    });
  }

  private JsonNode render(StoredUser user, Map<String, Long> unsynced) {
    ObjectNode body = Json.MAPPER.createObjectNode().put("login", user.login());
    try {
      body.set("card", Json.MAPPER.readTree(user.cardJson()));
    } catch (JsonProcessingException e) {
      body.put("card", user.cardJson());
    }
    ArrayNode routes = body.putArray("routes");
    for (UserCard.Route route : user.routes()) {
      routes.addObject().put("serverLogin", route.serverLogin()).put("url", route.url());
    }
    body.put("servedHere", user.servedBy(config.serverLogin()));
    body.put("sessions", sessions.sessionsOf(user.login()));
    ObjectNode perSibling = body.putObject("unsyncedBySibling");
    unsynced.forEach(perSibling::put);
    return body;
  }

  private static void answer(RoutingContext ctx, Future<JsonNode> work) {
    work.onSuccess(body -> ctx.response().putHeader("content-type", "application/json").end(body.toString()))
        .onFailure(failure -> error(ctx, failure));
  }

  private static void error(RoutingContext ctx, Throwable failure) {
    ProtocolException error = Failures.classify(failure);
    if (error.status() >= Status.INTERNAL) {
      LOG.warn("admin request failed [path: {}, status: {}, code: {}]", ctx.request().path(), error.status(),
          error.code());
    }
    ObjectNode body = Json.MAPPER.createObjectNode();
    body.putObject("error").put("code", error.code()).put("message", error.getMessage());
    ctx.response().setStatusCode(error.status()).putHeader("content-type", "application/json").end(body.toString());
  }
}
