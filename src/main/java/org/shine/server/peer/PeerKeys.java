package org.shine.server.peer;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.net.SocketAddress;
import java.net.URI;
import java.time.Clock;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.shine.server.config.AppConfig;
import org.shine.server.db.ServerKeyRepository;
import org.shine.server.db.ServerKeyRepository.KnownServer;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.egress.EgressResolver;
import org.shine.server.metrics.SignatureOp;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.Json;
import org.shine.server.util.LogText;
import org.shine.server.util.PerKeyRate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks a signature of another server (PROTOCOL §6a): the callee's check of a caller's ServerAuthLogin, and the
 * caller's check of a callee's hello. The key is the one pinned in {@code peers[].publicKeyB64}, else the key
 * learnt earlier, else the key fetched now from {@code /.well-known/shine-server} at the URL the check names (the URL
 * a caller dialed) or this server knows for that serverLogin (its peers entry or the URL of the first card route
 * naming it), which must name the same serverLogin. A key that differs from the learnt one is refused until an
 * operator pins it. Fetches go where the egress policy allows (§13), over https unless the address is loopback or
 * the peer is configured {@code insecure}, never follow redirects, and for names without a key yet are limited to
 * {@code egress.keyFetchesPerS} per claimed name and per source address, with failures remembered for
 * {@value #NEGATIVE_CACHE_MS} ms. A caller learns only that the key "could not be obtained": the upstream status or
 * text is logged here (escaped), never answered. Confined to the peer verticle's event loop.
 */
final class PeerKeys {
  private static final Logger LOG = LoggerFactory.getLogger(PeerKeys.class);
  static final String WELL_KNOWN_PATH = "/.well-known/shine-server";
  private static final int MAX_DOCUMENT_BYTES = 16 * 1024;
  /** After a signature fails with the learnt key, the server's document is fetched again at most this often. */
  private static final long REFETCH_INTERVAL_MS = 10_000;
  /** A failed fetch of a name's key is not tried again for this long (PROTOCOL §6a step 7). */
  static final long NEGATIVE_CACHE_MS = 60_000;
  static final int MAX_ENTRIES = 10_000;

  private final AppConfig config;
  private final ServerKeyRepository repository;
  private final HttpClient http;
  private final SignatureVerifier verifier;
  private final EgressResolver egress;
  private final Clock clock;
  private final Map<String, Long> lastRefetchMs = new HashMap<>();
  private final Map<String, Long> failedUntilMs = new LinkedHashMap<>(64, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
      return size() > MAX_ENTRIES;
    }
  };
  private final PerKeyRate fetchesPerName;
  private final PerKeyRate fetchesPerSource;

  PeerKeys(AppConfig config, ServerKeyRepository repository, HttpClient http, SignatureVerifier verifier,
      EgressResolver egress, Clock clock) {
    this.config = Objects.requireNonNull(config);
    this.repository = Objects.requireNonNull(repository);
    this.http = Objects.requireNonNull(http);
    this.verifier = Objects.requireNonNull(verifier);
    this.egress = Objects.requireNonNull(egress);
    this.clock = Objects.requireNonNull(clock);
    int perS = config.egress().keyFetchesPerS();
    this.fetchesPerName = new PerKeyRate(perS, 1_000_000_000L, MAX_ENTRIES, System::nanoTime);
    this.fetchesPerSource = new PerKeyRate(perS, 1_000_000_000L, MAX_ENTRIES, System::nanoTime);
  }

  /** Succeeds when the signature verifies with that server's key; fails with 401 or 403 otherwise. */
  Future<Void> verify(ServerLoginCheck login) {
    Optional<AppConfig.Peer> peer = config.peer(login.serverLogin());
    if (peer.isPresent() && peer.get().publicKeyB64() != null) {
      byte[] pinned = Base64.getDecoder().decode(peer.get().publicKeyB64());
      return signs(pinned, login).compose(valid -> valid
          ? repository.pinKey(login.serverLogin(), peer.get().url(), pinned, clock.millis())
          : Future.failedFuture(badSignature(login, "its pinned key")));
    }
    return repository.find(login.serverLogin()).compose(known -> {
      String url = login.url() != null ? login.url()
          : peer.map(AppConfig.Peer::url).orElse(known.map(KnownServer::url).orElse(null));
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
    // a configured peer's name is known already: only names others claim are limited (PROTOCOL §6a step 7)
    boolean configured = config.peer(login.serverLogin()).isPresent();
    ProtocolException limited = configured ? null : fetchRefused(login);
    if (limited != null) {
      return Future.failedFuture(limited);
    }
    return fetchKey(login.serverLogin(), url)
        .onFailure(failure -> {
          if (!configured) {
            remember(login.serverLogin());
          }
        })
        .compose(key -> signs(key, login).compose(valid -> {
          if (!valid) {
            return Future.failedFuture(badSignature(login, "the key it serves"));
          }
          return repository.learnKey(login.serverLogin(), url, key, clock.millis()).compose(stored -> {
            if (!Arrays.equals(stored, key)) {
              return Future.failedFuture(keyChanged(login.serverLogin()));
            }
            LOG.info("server key learnt [serverLogin: {}, url: {}]", login.serverLogin(), LogText.escape(url));
            return Future.succeededFuture();
          });
        }));
  }

  /** Why a first fetch of this name's key is not made now (a recent failure, or a rate limit), or null. */
  private ProtocolException fetchRefused(ServerLoginCheck login) {
    long now = clock.millis();
    Long failedUntil = failedUntilMs.get(login.serverLogin());
    if (failedUntil != null && failedUntil > now) {
      return unavailable(login.serverLogin());
    }
    if (fetchesPerName.tryAcquire(login.serverLogin()) != PerKeyRate.Grant.GRANTED
        || (login.source() != null && fetchesPerSource.tryAcquire(login.source()) != PerKeyRate.Grant.GRANTED)) {
      LOG.debug("key fetch limited [serverLogin: {}, source: {}]", login.serverLogin(), login.source());
      return unavailable(login.serverLogin());
    }
    return null;
  }

  private void remember(String serverLogin) {
    failedUntilMs.put(serverLogin, clock.millis() + NEGATIVE_CACHE_MS);
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
    if (lastRefetchMs.size() >= MAX_ENTRIES) {
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
    Optional<AppConfig.Peer> peer = config.peer(serverLogin).filter(p -> p.url().equals(wsUrl));
    return egress.resolve(documentUrl, peer.isPresent())
        .compose(destination -> {
          if (!destination.allowsSession(peer.map(AppConfig.Peer::insecure).orElse(false))) {
            return Future.failedFuture("plain http to a non-loopback address (a key is fetched over https only)");
          }
          RequestOptions request = new RequestOptions().setMethod(HttpMethod.GET)
              .setHost(destination.host()).setPort(destination.port()).setSsl(destination.secure())
              .setServer(SocketAddress.inetSocketAddress(destination.port(), destination.address().getHostAddress()))
              .setURI(WELL_KNOWN_PATH).setFollowRedirects(false)
              .setConnectTimeout(config.delivery().callTimeoutMs()).setIdleTimeout(config.delivery().callTimeoutMs());
          return http.request(request);
        })
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
        .recover(failure -> {
          LOG.debug("server key not obtained [serverLogin: {}, document: {}]: {}", serverLogin,
              LogText.escape(documentUrl), LogText.escape(String.valueOf(failure.getMessage())));
          return Future.failedFuture(unavailable(serverLogin));
        });
  }

  private static byte[] keyOf(String serverLogin, Buffer body) {
    JsonNode document;
    try {
      document = Json.MAPPER.readTree(body.toString());
    } catch (Exception e) {
      throw new IllegalArgumentException("the document is not JSON");
    }
    if (document == null || !serverLogin.equals(document.path("serverLogin").asText(null))) {
      throw new IllegalArgumentException("the document does not name serverLogin " + serverLogin);
    }
    byte[] key;
    try {
      key = Base64.getDecoder().decode(document.path("publicKeyB64").asText(""));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("publicKeyB64 is not base64");
    }
    if (key.length != Ed25519Signer.PUBLIC_KEY_SIZE) {
      throw new IllegalArgumentException("publicKeyB64 is not a 32-byte key");
    }
    return key;
  }

  /** {@code ws://h:p/ws} → {@code http://h:p/.well-known/shine-server}, {@code wss} → {@code https}. */
  static String documentUrl(String wsUrl) {
    URI uri = URI.create(wsUrl);
    String scheme = "wss".equals(uri.getScheme()) ? "https" : "http";
    return scheme + "://" + uri.getRawAuthority() + WELL_KNOWN_PATH;
  }

  /** 401 SERVER_KEY_UNAVAILABLE with nothing of what the other side answered (PROTOCOL §6a step 5). */
  private static ProtocolException unavailable(String serverLogin) {
    return new ProtocolException(Status.UNAUTHORIZED, ErrorCode.SERVER_KEY_UNAVAILABLE,
        "the key of server " + serverLogin + " could not be obtained");
  }

  private static ProtocolException badSignature(ServerLoginCheck login, String which) {
    return new ProtocolException(Status.UNAUTHORIZED, ErrorCode.BAD_SIGNATURE,
        "the signature does not verify with " + which + " of server " + login.serverLogin());
  }

  private static ProtocolException keyChanged(String serverLogin) {
    LOG.warn("server {} presents a key other than the one learnt for it: refused; pin the new key in"
        + " peers[].publicKeyB64 if the change is genuine", serverLogin);
    return new ProtocolException(Status.FORBIDDEN, ErrorCode.SERVER_KEY_CHANGED, "server " + serverLogin
        + " presents a key other than the one learnt for it; an operator must pin the new key");
  }
}
