package org.shine.server.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.config.AppConfig;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.metrics.SignatureOp;
import org.shine.server.model.StoredUser;
import org.shine.server.peer.ServerIdentity;
import org.shine.server.peer.ServerLoginCheck;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Fields;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.ProtocolErrors;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.Challenges;
import org.shine.server.util.LogText;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs a session in, as a user (AuthChallenge, AuthLogin: PROTOCOL §5) or as another server (ServerAuthChallenge,
 * ServerAuthLogin: §6a, v3). A user's session gets its events from the moment its login is answered.
 */
final class LoginHandler {
  private static final Logger LOG = LoggerFactory.getLogger(LoginHandler.class);
  /** Bytes of a caller's nonce (PROTOCOL §6a v3 step 3). */
  private static final int NONCE_BYTES = 32;
  private final AppConfig config;
  private final String serverLogin;
  private final ServerIdentity identity;
  private final EventBus bus;
  private final Frames frames;
  private final SignatureVerifier verifier;

  LoginHandler(AppConfig config, ServerIdentity identity, EventBus bus, Frames frames, SignatureVerifier verifier) {
    this.config = Objects.requireNonNull(config);
    this.serverLogin = config.serverLogin();
    this.identity = Objects.requireNonNull(identity);
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
    Fields fields = Fields.of(payload, "payload", Set.of("login", "signatureB64", "publicKeyB64"));
    String login = fields.login("login");
    byte[] signature = fields.base64("signatureB64", Ed25519Signer.SIGNATURE_SIZE);
    // v3: the device the client names; else each current key of the card is tried (PROTOCOL §4 v3)
    byte[] device = fields.has("publicKeyB64") ? fields.base64("publicKeyB64", Ed25519Signer.PUBLIC_KEY_SIZE) : null;
    requireNotServerSession(session);
    if (session.authenticated()) {
      throw ProtocolErrors.alreadyAuthenticated(session.login);
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
        return Future.failedFuture(ProtocolErrors.notAccessServer(serverLogin, login));
      }
      return verifier.check(SignatureOp.AUTH_LOGIN, () -> user.keys().currentSigner(signed, signature, device));
    }).compose(signer -> {
      if (signer == null) {
        return Future.failedFuture(ProtocolErrors.badChallengeSignature(login));
      }
      if (!session.anonymous()) {
        return Future.failedFuture(ProtocolErrors.alreadyAuthenticated(session.who()));
      }
      session.login = login;
      session.deviceKeyB64 = Base64.getEncoder().encodeToString(signer);
      // events flow from the moment the login is answered: wait until the consumer is registered
      session.events = bus.consumer(Addresses.userEvents(login), event -> {
        String revoked = event.headers().get(Addresses.REVOKED_KEYS_HEADER);
        if (revoked != null) {
          if (List.of(revoked.split(",")).contains(session.deviceKeyB64)) {
            session.closeRevoked.run();
          }
        } else if (!session.isNamedBy(event.headers().get(Addresses.EXCEPT_SESSION_HEADER))) {
          session.pushEvent.accept(event.body());
        }
      });
      return session.events.completion().map(v -> (JsonNode) frames.object().put("login", login));
    });
  }

  /**
   * ServerAuthChallenge: another server starts its login (PROTOCOL §6a). v3 {@code {serverLogin, expectedServerLogin,
   * nonceB64}}: 421 {@code WRONG_SERVER} unless it expects this server; else this server proves itself first with a
   * hello signed over the caller's nonce and a fresh challenge, single-use and bound to this connection. The v2 form
   * (no expected name, no nonce) only for peers configured {@code "protocol": "v2"}.
   */
  Future<JsonNode> serverAuthChallenge(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("serverLogin", "expectedServerLogin", "nonceB64"));
    String caller = fields.serverName("serverLogin");
    requireAnonymous(session);
    boolean v3 = fields.has("expectedServerLogin") || fields.has("nonceB64");
    if (!v3) {
      if (!speaksV2(caller)) {
        throw ProtocolException.badRequest(ErrorCode.MISSING_FIELD, "ServerAuthChallenge needs expectedServerLogin"
            + " and nonceB64 (a v3 server session); the v2 login is taken only from peers configured with protocol"
            + " v2");
      }
      session.serverChallengeFor = caller;
      session.serverChallengeV3 = false;
      session.serverChallengeB64 = Challenges.newChallengeB64();
      return Future.succeededFuture(frames.object().put("challengeB64", session.serverChallengeB64)
          .put("serverLogin", serverLogin));
    }
    String expected = fields.serverName("expectedServerLogin");
    String nonceB64 = fields.requiredString("nonceB64");
    fields.base64("nonceB64", NONCE_BYTES);
    if (!expected.equals(serverLogin)) {
      throw new ProtocolException(Status.MISDIRECTED, ErrorCode.WRONG_SERVER, "this server is " + serverLogin
          + ", not " + expected);
    }
    String challengeB64 = Challenges.newChallengeB64();
    session.serverChallengeFor = null;
    session.serverChallengeB64 = null;
    return verifier.sign(() -> identity.signHello(caller, nonceB64, challengeB64)).map(hello -> {
      session.serverChallengeFor = caller;
      session.serverChallengeV3 = true;
      session.serverChallengeB64 = challengeB64;
      return (JsonNode) frames.object().put("serverLogin", serverLogin).put("challengeB64", challengeB64)
          .put("signatureB64", Base64.getEncoder().encodeToString(hello));
    });
  }

  /**
   * ServerAuthLogin: v3 {@code {serverLogin, url, signatureB64}} over
   * {@code SHiNE_SERVER_AUTH3|<this server>|<caller>|<url>|<challenge>}, where {@code url} must be this server's
   * {@code publicUrl} or an alias (else 401 {@code WRONG_URL}); v2 {@code {serverLogin, signatureB64}} after a v2
   * challenge. Checked against the caller's key by the peer verticle; the challenge is gone whatever the outcome.
   * From the answer on, the session is that server's.
   */
  Future<JsonNode> serverAuthLogin(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("serverLogin", "url", "signatureB64"));
    String caller = fields.serverName("serverLogin");
    byte[] signature = fields.base64("signatureB64", Ed25519Signer.SIGNATURE_SIZE);
    requireAnonymous(session);
    if (!caller.equals(session.serverChallengeFor)) {
      throw ProtocolException.badRequest(ErrorCode.NO_CHALLENGE, "no ServerAuthChallenge is pending for " + caller);
    }
    String challengeB64 = session.serverChallengeB64;
    boolean v3 = session.serverChallengeV3;
    session.serverChallengeFor = null;
    session.serverChallengeB64 = null;
    if (caller.equals(serverLogin)) {
      throw new ProtocolException(Status.FORBIDDEN, ErrorCode.FORBIDDEN_AUTHOR,
          "a server session of " + caller + " with itself is not allowed");
    }
    byte[] signed;
    if (v3) {
      String url = fields.requiredString("url");
      if (!config.ownUrl(url)) {
        throw new ProtocolException(Status.UNAUTHORIZED, ErrorCode.WRONG_URL, "the login was signed for "
            + LogText.escape(url) + ", which is not this server's URL");
      }
      signed = ServerIdentity.loginBytesV3(serverLogin, caller, url, challengeB64);
    } else {
      if (fields.has("url")) {
        throw ProtocolException.badRequest(ErrorCode.UNKNOWN_FIELD, "payload.url belongs to a v3 login; this"
            + " challenge was a v2 one");
      }
      signed = ServerIdentity.loginBytes(serverLogin, caller, challengeB64);
    }
    ServerLoginCheck check = new ServerLoginCheck(caller, signed, signature, null, session.host());
    return BusReplies.<Boolean>request(bus, Addresses.PEER_VERIFY_LOGIN, check).compose(ok -> {
      if (!session.anonymous()) {
        return Future.failedFuture(ProtocolErrors.alreadyAuthenticated(session.who()));
      }
      session.serverLogin = caller;
      LOG.info("server session authenticated [serverLogin: {}, address: {}]", caller, session.address());
      return Future.succeededFuture(frames.object().put("serverLogin", caller));
    });
  }

  private boolean speaksV2(String caller) {
    return config.peer(caller).map(p -> p.protocol() == AppConfig.PeerProtocol.V2).orElse(false);
  }

  private static void requireAnonymous(Session session) {
    if (!session.anonymous()) {
      throw ProtocolErrors.alreadyAuthenticated(session.who());
    }
  }

  private static void requireNotServerSession(Session session) {
    if (session.serverAuthenticated()) {
      throw ProtocolErrors.alreadyAuthenticated(session.who());
    }
  }
}
