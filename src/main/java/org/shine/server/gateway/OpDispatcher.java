package org.shine.server.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.EventBus;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.TreeMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiFunction;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DirectoryRepository.StoredUser;
import org.shine.server.db.SyncRepository;
import org.shine.server.delivery.DeliveryStatus;
import org.shine.server.delivery.HistoryEntry;
import org.shine.server.delivery.HistoryPage;
import org.shine.server.delivery.HistoryQuery;
import org.shine.server.delivery.ReceiveIncomingCommand;
import org.shine.server.delivery.ReceiveOutgoingCommand;
import org.shine.server.delivery.SendPairCommand;
import org.shine.server.delivery.SendPairResult;
import org.shine.server.delivery.SignalCommand;
import org.shine.server.delivery.SignalService;
import org.shine.server.directory.CardJson;
import org.shine.server.directory.DirectoryService.PublishResult;
import org.shine.server.directory.UserCard;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.peer.ServerIdentity;
import org.shine.server.peer.ServerLoginCheck;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Fields;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.Ops;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.settings.SetSettingCommand;
import org.shine.server.protocol.SettingValues;
import org.shine.server.settings.UserSettings;
import org.shine.server.sync.DmSyncPage;
import org.shine.server.sync.SettingsSyncPage;
import org.shine.server.sync.SyncBatchRequest;
import org.shine.server.util.Challenges;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns one request payload into a bus call to the verticle that owns the work and its reply into a response
 * payload. Session-level ops (auth) are handled here. Runs on the gateway instance's event loop.
 */
final class OpDispatcher {
  private static final Logger LOG = LoggerFactory.getLogger(OpDispatcher.class);
  /** 70 KiB of container is at most this many base64 characters. */
  static final int MAX_CONTAINER_BYTES = 70 * 1024;
  private static final int MAX_CONTAINER_B64 = (MAX_CONTAINER_BYTES + 2) / 3 * 4;
  private static final int MAX_HISTORY_PAGE = 200;
  private static final int DEFAULT_HISTORY_PAGE = 50;
  private static final int MAX_ACKS = 10_000;
  private static final int MAX_SYNC_PAGE = 1_000;
  private static final int MAX_SETTING_KEY = 128;
  private static final int MAX_SETTING_VALUE = 16 * 1024;

  private final AppConfig config;
  private final EventBus bus;
  private final Frames frames;
  private final SignatureVerifier verifier;
  private final SendRateLimiter sendRates;
  private final Map<String, BiFunction<Session, JsonNode, Future<JsonNode>>> handlers;
  private final Set<String> authenticatedOps = Set.of(Ops.SEND_MESSAGE_PAIR, Ops.GET_DIRECT_MESSAGES,
      Ops.MARK_ALL_USER_SETTINGS_UNSYNCED, Ops.GET_USER_SETTINGS, Ops.SET_USER_SETTING, Ops.SEND_READ_RECEIPT,
      Ops.DELETE_MESSAGE);
  /** The client writes that count against {@code limits.sendsPerUserPerS} (PROTOCOL §11). */
  private final Set<String> rateLimitedOps = Set.of(Ops.SEND_MESSAGE_PAIR, Ops.SEND_READ_RECEIPT,
      Ops.DELETE_MESSAGE, Ops.SET_USER_SETTING);

  OpDispatcher(Vertx vertx, AppConfig config, Frames frames, SignatureVerifier verifier,
      SendRateLimiter sendRates) {
    this.config = Objects.requireNonNull(config);
    this.bus = vertx.eventBus();
    this.frames = Objects.requireNonNull(frames);
    this.verifier = Objects.requireNonNull(verifier);
    this.sendRates = Objects.requireNonNull(sendRates);
    Map<String, BiFunction<Session, JsonNode, Future<JsonNode>>> ops = new HashMap<>();
    ops.put(Ops.AUTH_CHALLENGE, this::authChallenge);
    ops.put(Ops.AUTH_LOGIN, this::authLogin);
    ops.put(Ops.SERVER_AUTH_CHALLENGE, this::serverAuthChallenge);
    ops.put(Ops.SERVER_AUTH_LOGIN, this::serverAuthLogin);
    ops.put(Ops.PUBLISH_USER_CARD, this::publishUserCard);
    ops.put(Ops.GET_USER_CARD, this::getUserCard);
    ops.put(Ops.SEND_MESSAGE_PAIR, this::sendMessagePair);
    ops.put(Ops.GET_DIRECT_MESSAGES, this::getDirectMessages);
    ops.put(Ops.RECEIVE_INCOMING_MESSAGE, this::receiveIncomingMessage);
    ops.put(Ops.RECEIVE_OUTCOMING_MESSAGE, this::receiveOutcomingMessage);
    ops.put(Ops.GET_DM_DELIVERY_STATUS, this::getDmDeliveryStatus);
    ops.put(Ops.SEND_READ_RECEIPT, this::sendReadReceipt);
    ops.put(Ops.DELETE_MESSAGE, this::deleteMessage);
    ops.put(Ops.DM_SYNC_BATCH, this::dmSyncBatch);
    ops.put(Ops.USER_SETTINGS_SYNC_BATCH, this::userSettingsSyncBatch);
    ops.put(Ops.MARK_ALL_USER_SETTINGS_UNSYNCED, this::markAllUserSettingsUnsynced);
    ops.put(Ops.GET_USER_SETTINGS, this::getUserSettings);
    ops.put(Ops.SET_USER_SETTING, this::setUserSetting);
    this.handlers = Map.copyOf(ops);
  }

  Future<JsonNode> dispatch(Session session, String op, JsonNode payload) {
    BiFunction<Session, JsonNode, Future<JsonNode>> handler = handlers.get(op);
    if (handler == null) {
      return Future.failedFuture(ProtocolException.badRequest(ErrorCode.UNKNOWN_OP, "unknown op " + op));
    }
    if (authenticatedOps.contains(op) && !session.authenticated()) {
      return Future.failedFuture(new ProtocolException(Status.UNAUTHORIZED, ErrorCode.NOT_AUTHENTICATED,
          op + " needs an authenticated session (AuthChallenge, then AuthLogin)"));
    }
    if (rateLimitedOps.contains(op) && !sendRates.tryAcquire(session.login)) {
      return Future.failedFuture(new ProtocolException(Status.TOO_MANY_REQUESTS, ErrorCode.RATE_LIMITED,
          "more than " + config.limits().sendsPerUserPerS() + " writes per second by " + session.login
              + " on this server; nothing was stored, retry later"));
    }
    try {
      return handler.apply(session, payload);
    } catch (RuntimeException e) {
      // whatever a handler throws is answered (a 500 is logged at the edge), never left hanging
      return Future.failedFuture(e);
    }
  }

  private Future<JsonNode> authChallenge(Session session, JsonNode payload) {
    String login = Fields.of(payload, "payload", Set.of("login")).login("login");
    requireNotServerSession(session);
    session.challengeLogin = login;
    session.challengeB64 = Challenges.newChallengeB64();
    return Future.succeededFuture(frames.object().put("challengeB64", session.challengeB64)
        .put("serverLogin", config.serverLogin()));
  }

  private Future<JsonNode> authLogin(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("login", "signatureB64"));
    String login = fields.login("login");
    byte[] signature = fields.base64("signatureB64", Ed25519Signer.SIGNATURE_SIZE);
    requireNotServerSession(session);
    if (session.authenticated()) {
      throw ProtocolException.badRequest(ErrorCode.ALREADY_AUTHENTICATED, "this session is already logged in as "
          + session.login);
    }
    if (!login.equals(session.challengeLogin)) {
      throw ProtocolException.badRequest(ErrorCode.NO_CHALLENGE, "no AuthChallenge is pending for " + login);
    }
    String challengeB64 = session.challengeB64;
    session.challengeLogin = null;
    session.challengeB64 = null;
    byte[] signed = ("SHiNE_AUTH|" + config.serverLogin() + "|" + challengeB64).getBytes(StandardCharsets.UTF_8);
    return BusReplies.<StoredUser>request(bus, Addresses.DIRECTORY_GET, login).compose(user -> {
      if (!user.servedBy(config.serverLogin())) {
        return Future.failedFuture(new ProtocolException(Status.MISDIRECTED, ErrorCode.NOT_ACCESS_SERVER,
            config.serverLogin() + " is not an access server of " + login));
      }
      return verifier.check(() -> user.verifier().verify(signed, 0, signed.length, signature, 0));
    }).compose(valid -> {
      if (!valid) {
        return Future.failedFuture(new ProtocolException(Status.UNAUTHORIZED, ErrorCode.BAD_SIGNATURE,
            "the challenge signature does not verify with " + login + "'s key"));
      }
      if (!session.anonymous()) {
        return Future.failedFuture(ProtocolException.badRequest(ErrorCode.ALREADY_AUTHENTICATED,
            "this session is already logged in as " + session.who()));
      }
      session.login = login;
      // events flow from the moment the login is answered: wait until the consumer is registered
      session.events = bus.consumer(Addresses.userEvents(login), event -> session.pushEvent.accept(event.body()));
      return session.events.completion().map(v -> (JsonNode) frames.object().put("login", login));
    });
  }

  /** ServerAuthChallenge {serverLogin}: another server starts its login (PROTOCOL §6a). */
  private Future<JsonNode> serverAuthChallenge(Session session, JsonNode payload) {
    String caller = Fields.of(payload, "payload", Set.of("serverLogin")).login("serverLogin");
    requireAnonymous(session);
    session.serverChallengeFor = caller;
    session.serverChallengeB64 = Challenges.newChallengeB64();
    return Future.succeededFuture(frames.object().put("challengeB64", session.serverChallengeB64)
        .put("serverLogin", config.serverLogin()));
  }

  /**
   * ServerAuthLogin {serverLogin, signatureB64} over {@code SHiNE_SERVER_AUTH|<this server>|<caller>|<challenge>},
   * checked against the caller's key by the peer verticle; from the answer on, the session is that server's.
   */
  private Future<JsonNode> serverAuthLogin(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("serverLogin", "signatureB64"));
    String caller = fields.login("serverLogin");
    byte[] signature = fields.base64("signatureB64", Ed25519Signer.SIGNATURE_SIZE);
    requireAnonymous(session);
    if (!caller.equals(session.serverChallengeFor)) {
      throw ProtocolException.badRequest(ErrorCode.NO_CHALLENGE, "no ServerAuthChallenge is pending for " + caller);
    }
    String challengeB64 = session.serverChallengeB64;
    session.serverChallengeFor = null;
    session.serverChallengeB64 = null;
    if (caller.equals(config.serverLogin())) {
      throw new ProtocolException(Status.FORBIDDEN, ErrorCode.FORBIDDEN_AUTHOR,
          "a server session of " + caller + " with itself is not allowed");
    }
    ServerLoginCheck check = new ServerLoginCheck(caller,
        ServerIdentity.loginBytes(config.serverLogin(), caller, challengeB64), signature);
    return BusReplies.<Boolean>request(bus, Addresses.PEER_VERIFY_LOGIN, check).compose(ok -> {
      if (!session.anonymous()) {
        return Future.failedFuture(ProtocolException.badRequest(ErrorCode.ALREADY_AUTHENTICATED,
            "this session is already logged in as " + session.who()));
      }
      session.serverLogin = caller;
      LOG.info("server session authenticated [serverLogin: {}, address: {}]", caller, session.address);
      return Future.succeededFuture(frames.object().put("serverLogin", caller));
    });
  }

  private static void requireAnonymous(Session session) {
    if (!session.anonymous()) {
      throw ProtocolException.badRequest(ErrorCode.ALREADY_AUTHENTICATED, "this session is already logged in as "
          + session.who());
    }
  }

  private static void requireNotServerSession(Session session) {
    if (session.serverAuthenticated()) {
      throw ProtocolException.badRequest(ErrorCode.ALREADY_AUTHENTICATED, "this session is already logged in as "
          + session.who());
    }
  }

  private Future<JsonNode> publishUserCard(Session session, JsonNode payload) {
    UserCard card = CardJson.parse(Fields.of(payload, "payload", Set.of("card")).required("card"));
    return BusReplies.<PublishResult>request(bus, Addresses.DIRECTORY_PUBLISH, card)
        .map(result -> frames.object().put("login", result.login()).put("version", result.version())
            .put("changed", result.changed()));
  }

  private Future<JsonNode> getUserCard(Session session, JsonNode payload) {
    String login = Fields.of(payload, "payload", Set.of("login")).login("login");
    return BusReplies.<StoredUser>request(bus, Addresses.DIRECTORY_GET, login).map(user -> {
      try {
        ObjectNode response = frames.object();
        response.set("card", frames.mapper().readTree(user.cardJson()));
        return response;
      } catch (JsonProcessingException e) {
        throw new IllegalStateException("stored card of " + login + " is not JSON", e);
      }
    });
  }

  private Future<JsonNode> sendMessagePair(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("incomingBlobB64", "outgoingBlobB64"));
    byte[] incoming = containerField(fields, "incomingBlobB64");
    byte[] outgoing = containerField(fields, "outgoingBlobB64");
    return BusReplies.<SendPairResult>request(bus, Addresses.DM_SEND_PAIR,
            new SendPairCommand(session.login, incoming, outgoing))
        .map(result -> frames.object()
            .put("baseKey", result.baseKey())
            .put("incomingKey", result.incomingKey())
            .put("outgoingKey", result.outgoingKey())
            .put("deliveryState", result.deliveryState().wire()));
  }

  private Future<JsonNode> receiveIncomingMessage(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("incomingBlobB64", "sourceServerLogin"));
    byte[] incoming = containerField(fields, "incomingBlobB64");
    String source = trustedSource(session, fields);
    return BusReplies.<String>request(bus, Addresses.DM_RECEIVE_INCOMING, new ReceiveIncomingCommand(incoming, source))
        .map(messageKey -> frames.object().put("messageKey", messageKey));
  }

  private Future<JsonNode> receiveOutcomingMessage(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("incomingBlobB64", "outgoingBlobB64", "sourceServerLogin"));
    byte[] incoming = containerField(fields, "incomingBlobB64");
    byte[] outgoing = containerField(fields, "outgoingBlobB64");
    String source = trustedSource(session, fields);
    return BusReplies.<SendPairResult>request(bus, Addresses.DM_RECEIVE_OUTGOING,
            new ReceiveOutgoingCommand(incoming, outgoing, source))
        .map(result -> frames.object().put("incomingKey", result.incomingKey())
            .put("outgoingKey", result.outgoingKey()));
  }

  private Future<JsonNode> getDmDeliveryStatus(Session session, JsonNode payload) {
    String messageKey = Fields.of(payload, "payload", Set.of("messageKey")).requiredString("messageKey");
    return BusReplies.<DeliveryStatus>request(bus, Addresses.DM_STATUS, messageKey)
        .map(status -> frames.object().put("messageKey", status.messageKey()).put("known", status.known())
            .put("delivered", status.delivered()));
  }

  private Future<JsonNode> sendReadReceipt(Session session, JsonNode payload) {
    byte[] receipt = containerField(Fields.of(payload, "payload", Set.of("receiptBlobB64")), "receiptBlobB64");
    return BusReplies.<SignalService.SignalResult>request(bus, Addresses.DM_READ_RECEIPT,
            new SignalCommand(session.login, receipt))
        .map(result -> frames.object().put("receiptKey", result.signalKey()).put("baseKey", result.ref())
            .put("deliveryState", result.deliveryState().wire()));
  }

  private Future<JsonNode> deleteMessage(Session session, JsonNode payload) {
    byte[] tombstone = containerField(Fields.of(payload, "payload", Set.of("tombstoneBlobB64")),
        "tombstoneBlobB64");
    return BusReplies.<SignalService.SignalResult>request(bus, Addresses.DM_DELETE,
            new SignalCommand(session.login, tombstone))
        .map(result -> frames.object().put("tombstoneKey", result.signalKey()).put("messageKey", result.ref()));
  }

  private Future<JsonNode> dmSyncBatch(Session session, JsonNode payload) {
    return BusReplies.<DmSyncPage>request(bus, Addresses.SYNC_DM_BATCH,
        syncRequest(session, Ops.DM_SYNC_BATCH, payload)).map(page -> {
      ObjectNode response = frames.object();
      ArrayNode items = response.putArray("items");
      Base64.Encoder base64 = Base64.getEncoder();
      for (SyncRepository.DmItem item : page.items()) {
        ObjectNode node = items.addObject().put("syncId", item.syncId()).put("owner", item.owner())
            .put("type", item.typeName());
        ArrayNode blobs = node.putArray("blobsB64");
        if (item.pair()) {
          blobs.add(base64.encodeToString(item.pairBlob()));
        }
        blobs.add(base64.encodeToString(item.blob()));
      }
      response.put("hasMore", page.hasMore());
      return response;
    });
  }

  private Future<JsonNode> userSettingsSyncBatch(Session session, JsonNode payload) {
    return BusReplies.<SettingsSyncPage>request(bus, Addresses.SYNC_SETTINGS_BATCH,
            syncRequest(session, Ops.USER_SETTINGS_SYNC_BATCH, payload))
        .map(page -> {
          ObjectNode response = frames.object();
          ArrayNode items = response.putArray("items");
          for (SyncRepository.SettingItem item : page.items()) {
            items.addObject().put("syncId", item.syncId()).put("owner", item.owner()).put("key", item.key())
                .put("updatedAtMs", item.updatedAtMs()).set("value", readJson(item.valueJson()));
          }
          response.put("hasMore", page.hasMore());
          return response;
        });
  }

  private SyncBatchRequest syncRequest(Session session, String op, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("sourceServerLogin", "ackSyncIds", "limit"));
    String puller = syncPuller(session, op, fields.login("sourceServerLogin"));
    List<Long> acks = new ArrayList<>();
    if (fields.has("ackSyncIds")) {
      JsonNode ids = fields.required("ackSyncIds");
      if (!ids.isArray() || ids.size() > MAX_ACKS) {
        throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD,
            "payload.ackSyncIds must be an array of at most " + MAX_ACKS + " syncIds");
      }
      for (JsonNode id : ids) {
        if (!id.isIntegralNumber() || !id.canConvertToLong() || id.asLong() < 0) {
          throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "payload.ackSyncIds holds a non-syncId");
        }
        acks.add(id.asLong());
      }
    }
    int limit = (int) fields.optionalLong("limit", 0, MAX_SYNC_PAGE, config.sync().pageSize());
    return new SyncBatchRequest(puller, acks, limit);
  }

  private Future<JsonNode> markAllUserSettingsUnsynced(Session session, JsonNode payload) {
    Fields.of(payload, "payload", Set.of());
    return BusReplies.<Integer>request(bus, Addresses.SYNC_MARK_UNSYNCED, session.login)
        .map(reset -> frames.object().put("reset", reset));
  }

  private Future<JsonNode> getUserSettings(Session session, JsonNode payload) {
    Fields.of(payload, "payload", Set.of());
    return BusReplies.<UserSettings>request(bus, Addresses.SETTINGS_GET, session.login).map(settings -> {
      ObjectNode response = frames.object();
      ObjectNode values = response.putObject("settings");
      new TreeMap<>(settings.values()).forEach((key, value) -> values.set(key, readJson(value)));
      return response;
    });
  }

  private Future<JsonNode> setUserSetting(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("key", "value"));
    String key = fields.requiredString("key");
    if (key.isEmpty() || key.length() > MAX_SETTING_KEY) {
      throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "payload.key must be 1.." + MAX_SETTING_KEY
          + " characters");
    }
    if (key.indexOf('\0') >= 0) {
      throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "payload.key must not contain NUL (U+0000)");
    }
    if (!payload.has("value")) {
      throw ProtocolException.badRequest(ErrorCode.MISSING_FIELD, "missing field payload.value");
    }
    if (SettingValues.containsNul(payload.get("value"))) {
      throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD,
          "payload.value must not contain NUL (U+0000) in any string or name");
    }
    String valueJson = payload.get("value").toString();
    if (valueJson.length() > MAX_SETTING_VALUE) {
      throw new ProtocolException(Status.TOO_LARGE, ErrorCode.INVALID_FIELD, "payload.value exceeds "
          + MAX_SETTING_VALUE + " characters of JSON");
    }
    return BusReplies.<Long>request(bus, Addresses.SETTINGS_SET, new SetSettingCommand(session.login, key,
        valueJson)).map(updatedAt -> frames.object().put("key", key).put("updatedAtMs", updatedAt));
  }

  private JsonNode readJson(String text) {
    try {
      return frames.mapper().readTree(text);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("stored JSON does not parse", e);
    }
  }

  /**
   * The sign of a server call that this server trusts (PROTOCOL §6a): the session's own server when
   * {@code sourceServerLogin} names it (another name is 403), or a configured legacy peer named on an anonymous
   * session; otherwise null, and the call is processed like a client's (recorded unsynced).
   */
  private String trustedSource(Session session, Fields fields) {
    String claimed = fields.has("sourceServerLogin") ? fields.login("sourceServerLogin") : null;
    if (claimed == null) {
      return null;
    }
    if (session.serverAuthenticated()) {
      requireOwnServer(session, claimed);
      return claimed;
    }
    return session.anonymous() && legacyPeer(claimed) ? claimed : null;
  }

  /** The sync ops serve only a server session (or a configured legacy peer); the puller is that server. */
  private String syncPuller(Session session, String op, String claimed) {
    if (session.serverAuthenticated()) {
      requireOwnServer(session, claimed);
      return claimed;
    }
    if (session.anonymous() && legacyPeer(claimed)) {
      return claimed;
    }
    throw new ProtocolException(Status.UNAUTHORIZED, ErrorCode.NOT_AUTHENTICATED,
        op + " needs an authenticated server session (ServerAuthChallenge, then ServerAuthLogin)");
  }

  private static void requireOwnServer(Session session, String claimed) {
    if (!claimed.equals(session.serverLogin)) {
      throw new ProtocolException(Status.FORBIDDEN, ErrorCode.SOURCE_MISMATCH, "sourceServerLogin " + claimed
          + " is not the server of this session (" + session.serverLogin + ")");
    }
  }

  private boolean legacyPeer(String serverLogin) {
    return config.peer(serverLogin).map(AppConfig.Peer::legacy).orElse(false);
  }

  private static byte[] containerField(Fields fields, String name) {
    if (fields.textLength(name) > MAX_CONTAINER_B64) {
      throw new ProtocolException(Status.TOO_LARGE, ErrorCode.CONTAINER_TOO_LARGE,
          name + " exceeds the container limit of " + MAX_CONTAINER_BYTES + " bytes");
    }
    return fields.base64(name, -1);
  }

  private Future<JsonNode> getDirectMessages(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("peer", "beforeCreatedAtMs", "limit"));
    String peer = fields.login("peer");
    long before = fields.optionalLong("beforeCreatedAtMs", 0, Long.MAX_VALUE, Long.MAX_VALUE);
    int limit = (int) fields.optionalLong("limit", 1, MAX_HISTORY_PAGE, DEFAULT_HISTORY_PAGE);
    return BusReplies.<HistoryPage>request(bus, Addresses.DM_HISTORY,
        new HistoryQuery(session.login, peer, before, limit)).map(this::renderHistory);
  }

  private JsonNode renderHistory(HistoryPage page) {
    ObjectNode response = frames.object();
    ArrayNode list = response.putArray("messages");
    Base64.Encoder base64 = Base64.getEncoder();
    for (HistoryEntry entry : page.messages()) {
      ObjectNode item = list.addObject()
          .put("messageKey", entry.messageKey())
          .put("baseKey", entry.baseKey())
          .put("direction", entry.outgoing() ? "outgoing" : "incoming")
          .put("blobB64", base64.encodeToString(entry.blob()))
          .put("revision", entry.revision());
      if (entry.deliveryState() != null) {
        item.put("deliveryState", entry.deliveryState().wire());
      }
      item.put("read", entry.read()).put("deleted", entry.deleted());
    }
    response.put("hasMore", page.hasMore());
    return response;
  }
}
