package org.shine.server.peer;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import java.net.URI;
import java.time.Clock;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.shine.server.config.AppConfig;
import org.shine.server.db.ServerKeyRepository;
import org.shine.server.db.ServerKeyRepository.KnownServer;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.metrics.SignatureOp;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.Json;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks another server's ServerAuthLogin against that server's key (PROTOCOL §6a): the key pinned in
 * {@code peers[].publicKeyB64}, else the key learnt earlier, else the key fetched now from
 * {@code /.well-known/shine-server} at the URL this server itself knows for that serverLogin (its peers entry or
 * the first card route naming it), which must name the same serverLogin. A key that differs from the learnt one
 * is refused until an operator pins it. Confined to the peer verticle's event loop.
 */
final class PeerKeys {
  private static final Logger LOG = LoggerFactory.getLogger(PeerKeys.class);
  static final String WELL_KNOWN_PATH = "/.well-known/shine-server";
  private static final int MAX_DOCUMENT_BYTES = 16 * 1024;
  /** After a signature fails with the learnt key, the server's document is fetched again at most this often. */
  private static final long REFETCH_INTERVAL_MS = 10_000;
  private static final int MAX_REFETCH_ENTRIES = 10_000;

  private final AppConfig config;
  private final ServerKeyRepository repository;
  private final HttpClient http;
  private final SignatureVerifier verifier;
  private final Clock clock;
  private final Map<String, Long> lastRefetchMs = new HashMap<>();

  PeerKeys(AppConfig config, ServerKeyRepository repository, HttpClient http, SignatureVerifier verifier,
      Clock clock) {
    this.config = Objects.requireNonNull(config);
    this.repository = Objects.requireNonNull(repository);
    this.http = Objects.requireNonNull(http);
    this.verifier = Objects.requireNonNull(verifier);
    this.clock = Objects.requireNonNull(clock);
  }

  /** Succeeds when the login's signature verifies with that server's key; fails with 401 or 403 otherwise. */
  Future<Void> verify(ServerLoginCheck login) {
    Optional<AppConfig.Peer> peer = config.peer(login.serverLogin());
    if (peer.isPresent() && peer.get().publicKeyB64() != null) {
      byte[] pinned = Base64.getDecoder().decode(peer.get().publicKeyB64());
      return signs(pinned, login).compose(valid -> valid
          ? repository.pinKey(login.serverLogin(), peer.get().url(), pinned, clock.millis())
          : Future.failedFuture(badSignature(login, "its pinned key")));
    }
    return repository.find(login.serverLogin()).compose(known -> {
      String url = peer.map(AppConfig.Peer::url).orElse(known.map(KnownServer::url).orElse(null));
      if (url == null) {
        return Future.failedFuture(new ProtocolException(Status.UNAUTHORIZED, ErrorCode.UNKNOWN_SERVER,
            "no URL is known here for server " + login.serverLogin() + " (not a configured peer, not named by any"
                + " accepted card), so its key cannot be checked"));
      }
      byte[] learnt = known.map(KnownServer::publicKey).orElse(null);
      return learnt == null ? firstContact(login, url) : withLearntKey(login, url, learnt);
    });
  }

  private Future<Void> firstContact(ServerLoginCheck login, String url) {
    return fetchKey(login.serverLogin(), url).compose(key -> signs(key, login).compose(valid -> {
      if (!valid) {
        return Future.failedFuture(badSignature(login, "the key it serves"));
      }
      return repository.learnKey(login.serverLogin(), url, key, clock.millis()).compose(stored -> {
        if (!Arrays.equals(stored, key)) {
          return Future.failedFuture(keyChanged(login.serverLogin()));
        }
        LOG.info("server key learnt [serverLogin: {}, url: {}]", login.serverLogin(), url);
        return Future.succeededFuture();
      });
    }));
  }

  private Future<Void> withLearntKey(ServerLoginCheck login, String url, byte[] learnt) {
    return signs(learnt, login).compose(valid -> {
      if (valid) {
        return Future.succeededFuture();
      }
      if (!mayRefetch(login.serverLogin())) {
        return Future.failedFuture(badSignature(login, "its learnt key"));
      }
      // the signature may be good under a new key: tell "wrong signature" from "changed key" for the operator
      return fetchKey(login.serverLogin(), url)
          .compose(current -> Arrays.equals(current, learnt) ? Future.succeededFuture(false) : signs(current, login))
          .otherwise(false)
          .compose(changed -> Future.failedFuture(changed ? keyChanged(login.serverLogin())
              : badSignature(login, "its learnt key")));
    });
  }

  private boolean mayRefetch(String serverLogin) {
    long now = clock.millis();
    Long last = lastRefetchMs.get(serverLogin);
    if (last != null && now - last < REFETCH_INTERVAL_MS) {
      return false;
    }
    if (lastRefetchMs.size() >= MAX_REFETCH_ENTRIES) {
      lastRefetchMs.clear();
    }
    lastRefetchMs.put(serverLogin, now);
    return true;
  }

  private Future<Boolean> signs(byte[] key, ServerLoginCheck login) {
    return verifier.verify(SignatureOp.SERVER_LOGIN, key, login.signedBytes(), login.signature());
  }

  /** The key served at the HTTP origin of {@code wsUrl}; fails with 401 when it cannot be had. */
  Future<byte[]> fetchKey(String serverLogin, String wsUrl) {
    String documentUrl = documentUrl(wsUrl);
    RequestOptions request = new RequestOptions().setMethod(HttpMethod.GET).setAbsoluteURI(documentUrl)
        .setConnectTimeout(config.delivery().callTimeoutMs()).setIdleTimeout(config.delivery().callTimeoutMs());
    return http.request(request)
        .compose(req -> req.send())
        .compose(response -> {
          if (response.statusCode() != 200) {
            response.request().reset();
            return Future.failedFuture("status " + response.statusCode());
          }
          Promise<Buffer> body = Promise.promise();
          Buffer collected = Buffer.buffer();
          response.handler(chunk -> {
            if (collected.length() + chunk.length() > MAX_DOCUMENT_BYTES) {
              body.tryFail("the document is larger than " + MAX_DOCUMENT_BYTES + " bytes");
              response.request().reset();
            } else {
              collected.appendBuffer(chunk);
            }
          });
          response.exceptionHandler(body::tryFail);
          response.endHandler(v -> body.tryComplete(collected));
          return body.future();
        })
        .map(body -> keyOf(serverLogin, body))
        .recover(failure -> Future.failedFuture(failure instanceof ProtocolException ? failure
            : new ProtocolException(Status.UNAUTHORIZED, ErrorCode.SERVER_KEY_UNAVAILABLE, "the key of server "
                + serverLogin + " could not be fetched from " + documentUrl + ": " + failure.getMessage())));
  }

  private static byte[] keyOf(String serverLogin, Buffer body) {
    try {
      JsonNode document = Json.MAPPER.readTree(body.toString());
      if (document == null || !serverLogin.equals(document.path("serverLogin").asText(null))) {
        throw new IllegalArgumentException("the document does not name serverLogin " + serverLogin);
      }
      byte[] key = Base64.getDecoder().decode(document.path("publicKeyB64").asText(""));
      if (key.length != Ed25519Signer.PUBLIC_KEY_SIZE) {
        throw new IllegalArgumentException("publicKeyB64 is not a 32-byte key");
      }
      return key;
    } catch (Exception e) {
      throw new ProtocolException(Status.UNAUTHORIZED, ErrorCode.SERVER_KEY_UNAVAILABLE,
          "server " + serverLogin + " serves no usable key: " + e.getMessage());
    }
  }

  /** {@code ws://h:p/ws} → {@code http://h:p/.well-known/shine-server}, {@code wss} → {@code https}. */
  static String documentUrl(String wsUrl) {
    URI uri = URI.create(wsUrl);
    String scheme = "wss".equals(uri.getScheme()) ? "https" : "http";
    return scheme + "://" + uri.getRawAuthority() + WELL_KNOWN_PATH;
  }

  private static ProtocolException badSignature(ServerLoginCheck login, String which) {
    return new ProtocolException(Status.UNAUTHORIZED, ErrorCode.BAD_SIGNATURE,
        "the ServerAuthLogin signature does not verify with " + which + " of server " + login.serverLogin());
  }

  private static ProtocolException keyChanged(String serverLogin) {
    LOG.warn("server {} presents a key other than the one learnt for it: refused; pin the new key in"
        + " peers[].publicKeyB64 if the change is genuine", serverLogin);
    return new ProtocolException(Status.FORBIDDEN, ErrorCode.SERVER_KEY_CHANGED, "server " + serverLogin
        + " presents a key other than the one learnt for it; an operator must pin the new key");
  }
}
