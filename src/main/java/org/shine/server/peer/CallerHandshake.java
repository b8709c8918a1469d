package org.shine.server.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Objects;
import org.shine.server.config.AppConfig.PeerProtocol;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Ops;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.Json;
import org.shine.server.util.LogText;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The caller's side of a server session (PROTOCOL §6a v3, steps 3-6). The caller always knows whom it dialed: it
 * names that server and a fresh nonce; it goes on only when the answer comes from that very name and its hello
 * verifies with that server's key (pinned, learnt, or fetched from the origin of the URL dialed); only then does it
 * sign, binding the URL it dialed. So a host that relays another server's challenge gets no signature it could use
 * (the v2 signing oracle). Peers configured {@code "protocol": "v2"} get the v2 strings (with the same name check);
 * {@code "v1"} peers get no login at all (they sync without a session). Confined to the peer verticle's event loop.
 */
final class CallerHandshake {
  private static final Logger LOG = LoggerFactory.getLogger(CallerHandshake.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  static final int NONCE_BYTES = 32;

  private final ServerIdentity identity;
  private final PeerKeys keys;
  private final SignatureVerifier signer;

  CallerHandshake(ServerIdentity identity, PeerKeys keys, SignatureVerifier signer) {
    this.identity = Objects.requireNonNull(identity);
    this.keys = Objects.requireNonNull(keys);
    this.signer = Objects.requireNonNull(signer);
  }

  /** What the peer made of our login; a refusal carries its reason for the admin API. */
  record Outcome(SessionLogin.Login login, String reason) {
    static Outcome of(SessionLogin.Login login) {
      return new Outcome(login, null);
    }
  }

  /** Sends one request on the connection being logged in. */
  @FunctionalInterface
  interface Sender {
    Future<JsonNode> send(String op, ObjectNode payload);
  }

  /**
   * Logs in as this server to {@code expected} at {@code url}. A refusal (by the peer, or by us: a wrong name, a hello
   * that does not verify) is an outcome, not a failure; only a lost connection (503) fails.
   */
  Future<Outcome> logIn(Sender send, String url, String expected, PeerProtocol protocol) {
    Future<Outcome> attempt = switch (protocol) {
      case V1 -> Future.succeededFuture(Outcome.of(SessionLogin.Login.NOT_SUPPORTED));
      case V2 -> logInV2(send, expected);
      case V3 -> logInV3(send, url, expected);
    };
    return attempt.recover(failure -> {
      if (!(failure instanceof ProtocolException refused) || refused.status() == Status.UNAVAILABLE) {
        return Future.failedFuture(failure);
      }
      if (refused.status() == Status.BAD_REQUEST && ErrorCode.UNKNOWN_OP.equals(refused.code())) {
        LOG.info("peer connected without a server session: it does not know ServerAuthChallenge (a v1 server);"
            + " open ops only [url: {}]", LogText.escape(url));
        return Future.succeededFuture(Outcome.of(SessionLogin.Login.NOT_SUPPORTED));
      }
      LOG.warn("peer refused this server's login [url: {}, status: {}, code: {}]: {}", LogText.escape(url),
          refused.status(), LogText.escape(refused.code()), LogText.escape(refused.getMessage()));
      return Future.succeededFuture(new Outcome(SessionLogin.Login.REFUSED, "login refused: " + refused.status()
          + " " + LogText.escape(refused.code())));
    });
  }

  private Future<Outcome> logInV3(Sender send, String url, String expected) {
    byte[] nonce = new byte[NONCE_BYTES];
    RANDOM.nextBytes(nonce);
    String nonceB64 = Base64.getEncoder().encodeToString(nonce);
    ObjectNode challenge = Json.MAPPER.createObjectNode().put("serverLogin", identity.serverLogin())
        .put("expectedServerLogin", expected).put("nonceB64", nonceB64);
    return send.send(Ops.SERVER_AUTH_CHALLENGE, challenge).compose(answer -> {
      String callee = answer.path("serverLogin").asText("");
      String challengeB64 = answer.path("challengeB64").asText("");
      if (!expected.equals(callee)) {
        return Future.succeededFuture(ourRefusal(url, "it answered as " + LogText.escape(callee) + ", not as "
            + expected + " whom this server dialed"));
      }
      byte[] hello;
      try {
        hello = Base64.getDecoder().decode(answer.path("signatureB64").asText(""));
      } catch (IllegalArgumentException e) {
        hello = new byte[0];
      }
      if (hello.length != 64 || challengeB64.isEmpty()) {
        return Future.succeededFuture(ourRefusal(url, "its answer carries no hello signature (not a v3 server?)"));
      }
      ServerLoginCheck check = new ServerLoginCheck(expected,
          ServerIdentity.helloBytes(expected, identity.serverLogin(), nonceB64, challengeB64), hello, url, null);
      return keys.verify(check).transform(verified -> {
        if (verified.succeeded()) {
          return signer.sign(() -> identity.signLoginV3(expected, url, challengeB64))
              .compose(signature -> send.send(Ops.SERVER_AUTH_LOGIN, Json.MAPPER.createObjectNode()
                  .put("serverLogin", identity.serverLogin()).put("url", url)
                  .put("signatureB64", Base64.getEncoder().encodeToString(signature))))
              .map(ok -> Outcome.of(SessionLogin.Login.AUTHENTICATED));
        }
        if (verified.cause() instanceof ProtocolException refused && refused.status() != Status.UNAVAILABLE) {
          return Future.succeededFuture(ourRefusal(url, "its hello does not verify: " + refused.getMessage()));
        }
        return Future.failedFuture(verified.cause());
      });
    });
  }

  private Future<Outcome> logInV2(Sender send, String expected) {
    ObjectNode challenge = Json.MAPPER.createObjectNode().put("serverLogin", identity.serverLogin());
    return send.send(Ops.SERVER_AUTH_CHALLENGE, challenge).compose(answer -> {
      String callee = answer.path("serverLogin").asText("");
      if (!expected.equals(callee)) {
        return Future.succeededFuture(ourRefusal(expected, "it answered as " + LogText.escape(callee)
            + ", not as " + expected + " whom this server dialed"));
      }
      String challengeB64 = answer.path("challengeB64").asText("");
      return signer.sign(() -> identity.signLogin(expected, challengeB64))
          .compose(signature -> send.send(Ops.SERVER_AUTH_LOGIN, Json.MAPPER.createObjectNode()
              .put("serverLogin", identity.serverLogin())
              .put("signatureB64", Base64.getEncoder().encodeToString(signature))))
          .map(ok -> Outcome.of(SessionLogin.Login.AUTHENTICATED));
    });
  }

  private static Outcome ourRefusal(String url, String why) {
    LOG.warn("no server session with peer: this server signs nothing for it, its sync waits; open ops still go"
        + " there [url: {}]: {}", LogText.escape(url), why);
    return new Outcome(SessionLogin.Login.REFUSED, "not logged in: " + why);
  }
}
