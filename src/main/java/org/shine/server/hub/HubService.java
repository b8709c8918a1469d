package org.shine.server.hub;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.HubRepository;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.metrics.SignatureOp;
import org.shine.server.model.StoredUser;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolErrors;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.Challenges;
import org.shine.server.util.Json;
import org.shine.server.util.PerKeyLimit;
import org.shine.server.util.PerKeyRate;

/**
 * The hub's logic behind its HTTP routes (PROTOCOL §10): challenges and token pairs for users this server serves,
 * the access-token check, polls of one event at a time within the per-user limit of this node, ACKs, and the cards
 * of authors, so that a user who polls verifies what it receives. A waiting
 * poll holds no thread: it waits for a wake-up on the bus (from any node) or for its timer.
 */
public final class HubService {
  private static final long CHALLENGE_TTL_MS = 120_000;
  /** Card reads one user may make per second on one node ({@code GET /hub/v1/cards/{login}}); beyond, 429. */
  static final int CARD_READS_PER_USER_PER_S = 50;
  /** Users whose card reads one node counts at once; a user new while that many are counted is refused (429). */
  private static final int CARD_READERS_TRACKED = 10_000;
  private final Vertx vertx;
  private final AppConfig config;
  private final HubRepository hub;
  private final DirectoryRepository directory;
  private final Clock clock;
  private final SignatureVerifier verifier;
  private final PerKeyLimit polls;
  private final HubTokens tokens;
  private final PerKeyRate cardReads;

  /**
   * {@code polls}: the open polls per user of this node, shared by its gateway instances; {@code cardReads}: the card
   * reads per user of this node ({@link #cardReadRate}), shared likewise.
   */
  public HubService(Vertx vertx, AppConfig config, Pool pool, DirectoryRepository users, Clock clock,
      SignatureVerifier verifier, PerKeyLimit polls, PerKeyRate cardReads) {
    this.vertx = Objects.requireNonNull(vertx);
    this.config = Objects.requireNonNull(config);
    this.hub = new HubRepository(pool);
    this.directory = Objects.requireNonNull(users);
    this.clock = Objects.requireNonNull(clock);
    this.verifier = Objects.requireNonNull(verifier);
    this.polls = Objects.requireNonNull(polls);
    this.tokens = new HubTokens(pool, config.hub(), clock);
    this.cardReads = Objects.requireNonNull(cardReads);
  }

  /**
   * The node's one count of card reads per user: {@value #CARD_READS_PER_USER_PER_S} a second each, by the node's
   * clock (a test's clock decides when the window refills).
   */
  static PerKeyRate cardReadRate(Clock clock) {
    return new PerKeyRate(CARD_READS_PER_USER_PER_S, TimeUnit.SECONDS.toNanos(1), CARD_READERS_TRACKED,
        () -> TimeUnit.MILLISECONDS.toNanos(clock.millis()));
  }

  /** A login challenge as the client gets it. */
  record Challenge(String challengeB64, String serverLogin) {
  }

  /** A new challenge for {@code login}, a user of this server; the oldest beyond {@code hub.challengesPerLogin} go. */
  Future<Challenge> challenge(String login) {
    return servedUser(login).compose(user -> {
      String challengeB64 = Challenges.newChallengeB64();
      return hub.saveChallenge(challengeB64, login, clock.millis() + CHALLENGE_TTL_MS,
          config.hub().challengesPerLogin())
          .map(v -> new Challenge(challengeB64, config.serverLogin()));
    });
  }

  /**
   * A first token pair for {@code login} against a live challenge it signed ({@code SHiNE_HUB|<this
   * server>|<challenge>}); from then on the user's events are queued on every node.
   */
  Future<HubTokens.Pair> issueTokens(String login, String challengeB64, byte[] signature) {
    byte[] signed = ("SHiNE_HUB|" + config.serverLogin() + "|" + challengeB64).getBytes(StandardCharsets.UTF_8);
    return servedUser(login).compose(user -> hub.takeChallenge(challengeB64, login, clock.millis())
        .compose(live -> {
          if (!live) {
            return Future.failedFuture(new ProtocolException(Status.UNAUTHORIZED, ErrorCode.NO_CHALLENGE,
                "no live challenge was issued to " + login + " with that value"));
          }
          return verifier.check(SignatureOp.HUB_TOKEN, () -> user.keys().currentSigner(signed, signature, null))
              .compose(signer -> signer != null ? hub.subscribe(login, clock.millis()).map(signer)
                  : Future.failedFuture(ProtocolErrors.badChallengeSignature(login)))
              .onSuccess(v -> vertx.eventBus().publish(Addresses.HUB_SUBSCRIBED, login))
              .compose(signer -> tokens.issue(login, Base64.getEncoder().encodeToString(signer)));
        }));
  }

  /** Rotates the pair of {@code refreshToken} ({@link HubTokens#refresh}). */
  Future<HubTokens.Pair> refresh(String refreshToken) {
    return tokens.refresh(refreshToken);
  }

  /** The live access token {@code accessToken}; 401 when it is unknown, expired or revoked. */
  Future<HubRepository.StoredToken> authenticate(String accessToken) {
    return hub.findToken(HubTokens.hash(accessToken)).compose(token -> {
      if (token.isEmpty() || !"access".equals(token.get().kind()) || token.get().revoked()
          || token.get().expiresAtMs() <= clock.millis()) {
        return Future.failedFuture(new ProtocolException(Status.UNAUTHORIZED, ErrorCode.INVALID_TOKEN,
            "the access token is unknown, expired or revoked"));
      }
      return Future.succeededFuture(token.get());
    });
  }

  /**
   * The next event of the token's user, waiting up to {@code waitS} seconds (never past the token's life); empty
   * when none came. 429 when the user already holds the node's limit of open polls.
   */
  Future<Optional<HubRepository.QueuedEvent>> poll(HubRepository.StoredToken token, long waitS) {
    String login = token.login();
    if (!polls.tryAcquire(login)) {
      return Future.failedFuture(new ProtocolException(Status.TOO_MANY_REQUESTS, ErrorCode.TOO_MANY_IN_FLIGHT,
          "more than " + polls.perKey() + " polls of one user at once on this server"));
    }
    // never hold the poll past the access token's life
    long holdMs = Math.max(0, Math.min(waitS * 1000, token.expiresAtMs() - clock.millis()));
    return nextEvent(login, holdMs).map(Optional::ofNullable).onComplete(ar -> polls.release(login));
  }

  /** The next event, or null once {@code holdMs} has passed without one ({@link PollWait}). */
  private Future<HubRepository.QueuedEvent> nextEvent(String login, long holdMs) {
    long visibilityMs = config.hub().visibilityTimeoutS() * 1000;
    return hub.takeHead(login, clock.millis(), visibilityMs).compose(head -> {
      if (head.taken() != null || holdMs == 0) {
        return Future.succeededFuture(head.taken());
      }
      PollWait wait = new PollWait(vertx, clock, () -> hub.takeHead(login, clock.millis(), visibilityMs),
          event -> hub.release(login, event.deliveryId()).onSuccess(v -> wakePolls(login)));
      return wait.await(vertx.eventBus().consumer(Addresses.hubWake(login)), holdMs);
    });
  }

  /**
   * The head of {@code login}'s queue changed without a new event (acked, or given back): its polls waiting on any
   * node look again, since the next event may be visible now.
   */
  private void wakePolls(String login) {
    vertx.eventBus().publish(Addresses.hubWake(login), "head");
  }

  /** ACKs {@code deliveryId} of the token's user (again: still fine); 404 when the user has no such delivery. */
  Future<Void> ack(HubRepository.StoredToken token, long deliveryId) {
    return hub.ack(deliveryId, token.login()).compose(found -> {
      if (!found) {
        return Future.failedFuture(new ProtocolException(Status.NOT_FOUND, ErrorCode.UNKNOWN_DELIVERY,
            "no delivery " + deliveryId + " for this user"));
      }
      wakePolls(token.login());
      return Future.succeededFuture();
    });
  }

  /**
   * The card of {@code login} as this server stores it (read through the directory, as {@code GetUserCard} is), for
   * the token's user to verify its events with; 404 {@code USER_NOT_FOUND} when there is none, 429 {@code RATE_LIMITED}
   * beyond {@value #CARD_READS_PER_USER_PER_S} reads a second of one user on this node.
   */
  Future<JsonNode> card(HubRepository.StoredToken token, String login) {
    if (cardReads.tryAcquire(token.login()) != PerKeyRate.Grant.GRANTED) {
      return Future.failedFuture(new ProtocolException(Status.TOO_MANY_REQUESTS, ErrorCode.RATE_LIMITED,
          "more than " + CARD_READS_PER_USER_PER_S + " card reads a second of one user on this server; retry later"));
    }
    return BusReplies.<StoredUser>request(vertx.eventBus(), Addresses.DIRECTORY_GET, login).map(user -> {
      try {
        return Json.MAPPER.readTree(user.cardJson());
      } catch (JsonProcessingException e) {
        throw new IllegalStateException("stored card of " + login + " is not JSON", e);
      }
    });
  }

  private Future<StoredUser> servedUser(String login) {
    return directory.find(login).compose(found -> {
      if (found.isEmpty()) {
        return Future.failedFuture(ProtocolErrors.userNotFound(login));
      }
      if (!found.get().servedBy(config.serverLogin())) {
        return Future.failedFuture(ProtocolErrors.notAccessServer(config.serverLogin(), login));
      }
      return Future.succeededFuture(found.get());
    });
  }
}
