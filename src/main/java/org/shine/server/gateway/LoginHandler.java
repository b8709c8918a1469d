package org.shine.server.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Set;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.metrics.SignatureOp;
import org.shine.server.model.StoredUser;
import org.shine.server.peer.ServerIdentity;
import org.shine.server.peer.ServerLoginCheck;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Fields;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.Challenges;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs a session in, as a user (AuthChallenge, AuthLogin: PROTOCOL §5) or as another server (ServerAuthChallenge,
 * ServerAuthLogin: §6a). A user's session gets its events from the moment its login is answered.
 */
final class LoginHandler {
  private static final Logger LOG = LoggerFactory.getLogger(LoginHandler.class);
  private final String serverLogin;
  private final EventBus bus;
  private final Frames frames;
  private final SignatureVerifier verifier;

  /** {@code serverLogin}: this server's. */
  LoginHandler(String serverLogin, EventBus bus, Frames frames, SignatureVerifier verifier) {
    this.serverLogin = Objects.requireNonNull(serverLogin);
    this.bus = Objects.requireNonNull(bus);
    this.frames = Objects.requireNonNull(frames);
    this.verifier = Objects.requireNonNull(verifier);
  }

  Future<JsonNode> authChallenge(Session session, JsonNode payload) {
    String login = Fields.of(payload, "payload", Set.of("login")).login("login");
    requireNotServerSession(session);
    session.challengeLogin = login;
    session.challengeB64 = Challenges.newChallengeB64();
    return Future.succeededFuture(frames.object().put("challengeB64", session.challengeB64)
        .put("serverLogin", serverLogin));
  }

  Future<JsonNode> authLogin(Session session, JsonNode payload) {
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
    byte[] signed = ("SHiNE_AUTH|" + serverLogin + "|" + challengeB64).getBytes(StandardCharsets.UTF_8);
    return BusReplies.<StoredUser>request(bus, Addresses.DIRECTORY_GET, login).compose(user -> {
      if (!user.servedBy(serverLogin)) {
        return Future.failedFuture(new ProtocolException(Status.MISDIRECTED, ErrorCode.NOT_ACCESS_SERVER,
            serverLogin + " is not an access server of " + login));
      }
      return verifier.check(SignatureOp.AUTH_LOGIN,
          () -> user.verifier().verify(signed, 0, signed.length, signature, 0));
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
      session.events = bus.consumer(Addresses.userEvents(login), event -> {
        if (!session.id.equals(event.headers().get(Addresses.EXCEPT_SESSION_HEADER))) {
          session.pushEvent.accept(event.body());
        }
      });
      return session.events.completion().map(v -> (JsonNode) frames.object().put("login", login));
    });
  }

  /** ServerAuthChallenge {serverLogin}: another server starts its login (PROTOCOL §6a). */
  Future<JsonNode> serverAuthChallenge(Session session, JsonNode payload) {
    String caller = Fields.of(payload, "payload", Set.of("serverLogin")).login("serverLogin");
    requireAnonymous(session);
    session.serverChallengeFor = caller;
    session.serverChallengeB64 = Challenges.newChallengeB64();
    return Future.succeededFuture(frames.object().put("challengeB64", session.serverChallengeB64)
        .put("serverLogin", serverLogin));
  }

  /**
   * ServerAuthLogin {serverLogin, signatureB64} over {@code SHiNE_SERVER_AUTH|<this server>|<caller>|<challenge>},
   * checked against the caller's key by the peer verticle; from the answer on, the session is that server's.
   */
  Future<JsonNode> serverAuthLogin(Session session, JsonNode payload) {
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
    if (caller.equals(serverLogin)) {
      throw new ProtocolException(Status.FORBIDDEN, ErrorCode.FORBIDDEN_AUTHOR,
          "a server session of " + caller + " with itself is not allowed");
    }
    ServerLoginCheck check = new ServerLoginCheck(caller,
        ServerIdentity.loginBytes(serverLogin, caller, challengeB64), signature);
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
}
