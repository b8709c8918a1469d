package org.shine.server.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.EventBus;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.shine.server.config.AppConfig;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.peer.ServerIdentity;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.Ops;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;

/**
 * Routes one request payload to the handler of its op, after the checks every op shares: a known op, a logged-in
 * user where the op needs one, the user's write rate, then the §13 limits of the session ({@link OpLimits}: ops of
 * a peer server, card publishes of a client address). The handlers turn the payload into a bus call to the
 * verticle that owns the work and its reply into a response payload. Runs on the gateway instance's event loop.
 */
final class OpDispatcher {
  private final OpLimits limits;
  private final Map<String, OpHandler> handlers;
  private final Set<String> authenticatedOps = Set.of(Ops.SEND_MESSAGE_PAIR, Ops.GET_DIRECT_MESSAGES,
      Ops.GET_CONVERSATIONS, Ops.MARK_ALL_USER_SETTINGS_UNSYNCED, Ops.GET_USER_SETTINGS, Ops.SET_USER_SETTING, Ops.SEND_READ_RECEIPT,
      Ops.DELETE_MESSAGE);
  /** The client writes that count against {@code limits.sendsPerUserPerS} (PROTOCOL §11). */
  private final Set<String> rateLimitedOps = Set.of(Ops.SEND_MESSAGE_PAIR, Ops.SEND_READ_RECEIPT,
      Ops.DELETE_MESSAGE, Ops.SET_USER_SETTING);

  OpDispatcher(Vertx vertx, AppConfig config, ServerIdentity identity, Frames frames, SignatureVerifier verifier,
      OpLimits limits, LegacyPeerAddresses legacyPeers) {
    this(handlers(vertx.eventBus(), config, identity, frames, verifier, limits, legacyPeers), limits);
  }

  /** Over {@code handlers} by op (tests). */
  OpDispatcher(Map<String, OpHandler> handlers, OpLimits limits) {
    this.handlers = Map.copyOf(handlers);
    this.limits = Objects.requireNonNull(limits);
  }

  private static Map<String, OpHandler> handlers(EventBus bus, AppConfig config, ServerIdentity identity,
      Frames frames, SignatureVerifier verifier, OpLimits limits, LegacyPeerAddresses legacyPeers) {
    ServerTrust trust = new ServerTrust(config, legacyPeers);
    LoginHandler logins = new LoginHandler(config, identity, bus, frames, verifier);
    CardHandler cards = new CardHandler(bus, frames);
    MessageHandler messages = new MessageHandler(bus, frames);
    ServerCallHandler serverCalls = new ServerCallHandler(bus, frames, trust, limits);
    SyncHandler sync = new SyncHandler(bus, frames, trust, config.sync().pageSize());
    SettingsHandler settings = new SettingsHandler(bus, frames);
    Map<String, OpHandler> ops = new HashMap<>();
    ops.put(Ops.AUTH_CHALLENGE, logins::authChallenge);
    ops.put(Ops.AUTH_LOGIN, logins::authLogin);
    ops.put(Ops.SERVER_AUTH_CHALLENGE, logins::serverAuthChallenge);
    ops.put(Ops.SERVER_AUTH_LOGIN, logins::serverAuthLogin);
    ops.put(Ops.PUBLISH_USER_CARD, cards::publishUserCard);
    ops.put(Ops.GET_USER_CARD, cards::getUserCard);
    ops.put(Ops.SEND_MESSAGE_PAIR, messages::sendMessagePair);
    ops.put(Ops.GET_DIRECT_MESSAGES, messages::getDirectMessages);
    ops.put(Ops.GET_CONVERSATIONS, messages::getConversations);
    ops.put(Ops.RECEIVE_INCOMING_MESSAGE, serverCalls::receiveIncomingMessage);
    ops.put(Ops.RECEIVE_OUTCOMING_MESSAGE, serverCalls::receiveOutcomingMessage);
    ops.put(Ops.GET_DM_DELIVERY_STATUS, serverCalls::getDmDeliveryStatus);
    ops.put(Ops.SEND_READ_RECEIPT, messages::sendReadReceipt);
    ops.put(Ops.DELETE_MESSAGE, messages::deleteMessage);
    ops.put(Ops.DM_SYNC_BATCH, sync::dmSyncBatch);
    ops.put(Ops.USER_SETTINGS_SYNC_BATCH, sync::userSettingsSyncBatch);
    ops.put(Ops.MARK_ALL_USER_SETTINGS_UNSYNCED, sync::markAllUserSettingsUnsynced);
    ops.put(Ops.GET_USER_SETTINGS, settings::getUserSettings);
    ops.put(Ops.SET_USER_SETTING, settings::setUserSetting);
    return ops;
  }

  Future<JsonNode> dispatch(Session session, String op, JsonNode payload) {
    OpHandler handler = handlers.get(op);
    if (handler == null) {
      return Future.failedFuture(ProtocolException.badRequest(ErrorCode.UNKNOWN_OP, "unknown op " + op));
    }
    if (authenticatedOps.contains(op) && !session.authenticated()) {
      return Future.failedFuture(new ProtocolException(Status.UNAUTHORIZED, ErrorCode.NOT_AUTHENTICATED,
          op + " needs an authenticated session (AuthChallenge, then AuthLogin)"));
    }
    try {
      if (rateLimitedOps.contains(op)) {
        limits.admitWrite(session.login);
      }
      if (session.serverAuthenticated()) {
        limits.admitPeerOp(session.serverLogin);
      } else if (Ops.PUBLISH_USER_CARD.equals(op)) {
        limits.admitCardPublish(session.host());
      }
      return handler.handle(session, payload);
    } catch (RuntimeException e) {
      // whatever a limit or a handler throws is answered (a 500 is logged at the edge), never left hanging
      return Future.failedFuture(e);
    }
  }
}
