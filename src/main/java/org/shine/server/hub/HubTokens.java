package org.shine.server.hub;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.shine.server.config.AppConfig;
import org.shine.server.db.HubRepository;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hub's token pairs (PROTOCOL §10 v2): a login starts a family with a random pair; a refresh rotates it in one
 * transaction to a pair derived from the presented refresh token (HMAC-SHA256 under the deployment's secret), so
 * that the same old token presented again within {@code hub.refreshGraceS} is answered with the same pair while
 * only hashes are stored. Any other reuse revokes the whole family.
 */
final class HubTokens {
  private static final Logger LOG = LoggerFactory.getLogger(HubTokens.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final int TOKEN_BYTES = 32;
  private static final String ACCESS = "access";
  private static final String REFRESH = "refresh";
  private final Pool pool;
  private final HubRepository hub;
  private final AppConfig.Hub config;
  private final Clock clock;
  /* read once per instance; every node reads the same row, so any node can answer a retry */
  private Future<byte[]> secret;

  HubTokens(Pool pool, AppConfig.Hub config, Clock clock) {
    this.pool = Objects.requireNonNull(pool);
    this.hub = new HubRepository(pool);
    this.config = Objects.requireNonNull(config);
    this.clock = Objects.requireNonNull(clock);
  }

  /** A token pair as the client gets it. */
  record Pair(String accessToken, String refreshToken, long expiresInS) {
  }

  /**
   * A new family for {@code login}, with a random pair, started by the device key {@code deviceKeyB64} (revoking that
   * key ends the family, PROTOCOL §4 v3).
   */
  Future<Pair> issue(String login, String deviceKeyB64) {
    String access = randomToken();
    String refresh = randomToken();
    long now = clock.millis();
    String family = UUID.randomUUID().toString();
    return hub.saveFamilyKey(family, login, deviceKeyB64)
        .compose(v -> hub.savePair(pool, newPair(login, family, access, refresh, now, null)))
        .map(v -> new Pair(access, refresh, config.accessTtlS()));
  }

  /** Rotates the pair of {@code refreshToken}, or answers a retry with the pair it got; 401 otherwise. */
  Future<Pair> refresh(String refreshToken) {
    byte[] presented = hash(refreshToken);
    return secret().compose(key -> {
      String access = derive(key, ACCESS, refreshToken);
      String refresh = derive(key, REFRESH, refreshToken);
      // a rejection commits (it may have revoked the family) and only then fails the request
      return pool.withTransaction(conn -> hub.lockToken(conn, presented).compose(old -> old.isEmpty()
          ? Future.succeededFuture(Optional.<Pair>empty())
          : rotateOrRetry(conn, old.get(), presented, access, refresh)));
    }).compose(answer -> answer.map(Future::succeededFuture).orElseGet(() -> Future.failedFuture(
        new ProtocolException(Status.UNAUTHORIZED, ErrorCode.INVALID_TOKEN,
            "the refresh token is unknown, expired, revoked or already used"))));
  }

  private Future<Optional<Pair>> rotateOrRetry(SqlConnection conn, HubRepository.StoredToken old, byte[] presented,
      String access, String refresh) {
    long now = clock.millis();
    if (!REFRESH.equals(old.kind())) {
      return Future.succeededFuture(Optional.empty());
    }
    if (old.revoked()) {
      return revoke(conn, old, "a revoked refresh token was presented");
    }
    if (!old.used()) {
      if (old.expiresAtMs() <= now) {
        return Future.succeededFuture(Optional.empty());
      }
      return hub.markUsed(conn, presented)
          .compose(v -> hub.savePair(conn, newPair(old.login(), old.family(), access, refresh, now, presented)))
          .map(v -> Optional.of(new Pair(access, refresh, config.accessTtlS())));
    }
    return hub.children(conn, presented).compose(children -> {
      Optional<HubRepository.ChildToken> accessChild = child(children, ACCESS, access);
      Optional<HubRepository.ChildToken> refreshChild = child(children, REFRESH, refresh);
      if (accessChild.isEmpty() || refreshChild.isEmpty()) {
        return revoke(conn, old, "a spent refresh token was presented again, and its pair is gone");
      }
      HubRepository.ChildToken issued = accessChild.get();
      HubRepository.ChildToken next = refreshChild.get();
      if (now >= issued.parentUsedAtMs() + config.refreshGraceS() * 1000) {
        return revoke(conn, old, "a spent refresh token was presented again after the grace window");
      }
      if (issued.revoked() || next.revoked()) {
        return revoke(conn, old, "a spent refresh token was presented again after its pair was revoked");
      }
      if (next.used()) {
        // the pair did arrive (its refresh token has been used since): this is no retry of a lost answer
        return revoke(conn, old, "a spent refresh token was presented again after its successor was used");
      }
      long remainingS = Math.max(0, (issued.expiresAtMs() - now) / 1000);
      return Future.succeededFuture(Optional.of(new Pair(access, refresh, remainingS)));
    });
  }

  private Future<Optional<Pair>> revoke(SqlConnection conn, HubRepository.StoredToken old, String why) {
    LOG.info("revoking a hub token family [login: {}]: {}", old.login(), why);
    return hub.revokeFamily(conn, old.family()).map(v -> Optional.empty());
  }

  /** The child of {@code kind} whose hash is that of {@code token}: the pair a retry would be answered with. */
  private static Optional<HubRepository.ChildToken> child(List<HubRepository.ChildToken> children, String kind,
      String token) {
    byte[] expected = hash(token);
    return children.stream().filter(c -> kind.equals(c.kind()) && Arrays.equals(c.hash(), expected)).findFirst();
  }

  private HubRepository.NewPair newPair(String login, String family, String access, String refresh, long now,
      byte[] parentHash) {
    return new HubRepository.NewPair(login, family, hash(access), now + config.accessTtlS() * 1000, hash(refresh),
        now + config.refreshTtlS() * 1000, now, parentHash);
  }

  private Future<byte[]> secret() {
    if (secret == null || secret.failed()) {
      byte[] candidate = new byte[TOKEN_BYTES];
      RANDOM.nextBytes(candidate);
      secret = hub.rotationSecret(candidate);
    }
    return secret;
  }

  private static String derive(byte[] key, String kind, String refreshToken) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      byte[] token = mac.doFinal(("SHiNE_HUB_ROTATE|" + kind + "|" + refreshToken).getBytes(StandardCharsets.UTF_8));
      return Base64.getUrlEncoder().withoutPadding().encodeToString(token);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String randomToken() {
    byte[] bytes = new byte[TOKEN_BYTES];
    RANDOM.nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  /** The only form in which a token is stored or looked up. */
  static byte[] hash(String token) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
