package org.shine.server.directory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import java.net.InetAddress;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.shine.server.bus.Addresses;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.HubRepository;
import org.shine.server.db.InviteRepository;
import org.shine.server.db.ServerKeyRepository;
import org.shine.server.db.SyncRepository;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.egress.EgressPolicy;
import org.shine.server.metrics.SignatureOp;
import org.shine.server.model.KeyHistoryEntry;
import org.shine.server.model.StoredUser;
import org.shine.server.model.UserCard;
import org.shine.server.peer.PeerCalls;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Ops;
import org.shine.server.protocol.ProtocolErrors;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.Cidr;
import org.shine.server.util.LogText;
import org.shine.server.util.WsUrls;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Accepts signed user cards by the rules of PROTOCOL §4 and keeps the routes table (and the sync queue) current. */
public final class DirectoryService {
  private static final Logger LOG = LoggerFactory.getLogger(DirectoryService.class);
  /** A card is relayed to the servers of its user's correspondents of this long ago (PROTOCOL §4 v3). */
  static final long RELAY_WINDOW_MS = 30L * 24 * 3600 * 1000;
  /** Servers one card is relayed to, at most. */
  static final int MAX_RELAY_TARGETS = 1_000;
  /** Cards one chain answer holds, at most (a server that missed more asks again from the last one). */
  static final int MAX_CHAIN = 64;
  private final Vertx vertx;
  private final Pool pool;
  private final DirectoryRepository repository;
  private final SyncRepository outbox;
  private final ObjectMapper mapper;
  private final Clock clock;
  private final AppConfig config;
  private final PeerCalls peers;
  private final SignatureVerifier verifier;
  private final ServerKeyRepository servers;
  private final InviteRepository invites;
  private final EgressPolicy egress;
  private final HubRepository hubTokens;

  public DirectoryService(Vertx vertx, DirectoryServices services, ObjectMapper mapper) {
    this.vertx = Objects.requireNonNull(vertx);
    this.verifier = services.verifier();
    this.servers = services.servers();
    this.invites = services.invites();
    this.egress = EgressPolicy.of(services.config());
    this.config = services.config();
    this.peers = services.peers();
    this.pool = services.pool();
    this.repository = services.users();
    this.outbox = services.outbox();
    this.mapper = Objects.requireNonNull(mapper);
    this.clock = services.clock();
    this.hubTokens = services.hubTokens();
  }

  /**
   * Verifies (on the worker pool) and stores a card by the rules of PROTOCOL §4 ({@link CardRules}); an identical
   * re-publish is an unchanged success. A route must keep each serverLogin at its one known URL (PROTOCOL §6a: this
   * server's own, a configured peer's, or the URL of the first accepted card naming it), else 409
   * {@code ROUTE_CONFLICT}. A login new here must also pass {@code directory.registration} ({@link #admit}). A card
   * whose signer the stored card cannot place (versions were missed here) makes this server fetch the chain of cards
   * from the card's routes once and try again; still unplaced, it is 409 {@code CARD_CHAIN_GAP}. So does the first
   * card of a login that a server relays without being one of its routes ({@link #relayedFromElsewhere}).
   */
  public Future<PublishResult> publish(PublishCardCommand command) {
    return publish(command, true);
  }

  private Future<PublishResult> publish(PublishCardCommand command, boolean mayFetchChain) {
    UserCard card = command.card();
    byte[] signerKey = Base64.getDecoder().decode(card.signerKeyB64());
    byte[] signature = Base64.getDecoder().decode(card.signatureB64());
    try {
      checkConfiguredRoutes(card);
    } catch (ProtocolException e) {
      return Future.failedFuture(e);
    }
    return verifier.verify(SignatureOp.CARD, signerKey, card.signedBytes(), signature)
        .compose(valid -> valid ? store(command, mayFetchChain) : Future.failedFuture(ProtocolException.badRequest(
            ErrorCode.BAD_SIGNATURE, "card signature does not verify with the card's "
                + (card.v3() ? "signerKeyB64" : "public key"))))
        .recover(failure -> {
          if (!(failure instanceof ChainGap gap)) {
            return Future.failedFuture(failure);
          }
          if (!mayFetchChain) {
            return Future.failedFuture(chainGap(card));
          }
          return fetchChain(command, gap).compose(v -> publish(command, false));
        });
  }

  private static ProtocolException chainGap(UserCard card) {
    return new ProtocolException(Status.CONFLICT, ErrorCode.CARD_CHAIN_GAP, "the card of " + card.login()
        + " (epoch " + card.epoch() + ", version " + card.version() + ") is signed by a key this server cannot place"
        + " from the card it holds, and no server served the cards in between: retry later");
  }

  /**
   * Asks the login's servers (other than this one) — the stored card's routes first, they are the user's as this
   * server knows them, then the new card's — one after the other, for the cards accepted after the stored one, and
   * publishes each in order as {@code command}'s publisher would (each judged and verified as any card); completes
   * when one answered, or none could. For a login new here, the current card is asked for.
   */
  private Future<Void> fetchChain(PublishCardCommand command, ChainGap gap) {
    UserCard card = command.card();
    Set<String> urls = new LinkedHashSet<>();
    if (gap.stored() != null) {
      gap.stored().accessServers().forEach(route -> urls.add(route.url()));
    }
    card.accessServers().forEach(route -> urls.add(route.url()));
    urls.removeIf(config::ownUrl);
    Future<Boolean> chain = Future.succeededFuture(false);
    for (String url : urls) {
      chain = chain.compose(done -> done ? Future.succeededFuture(true) : fetchChainFrom(url, command, gap));
    }
    return chain.mapEmpty();
  }

  private Future<Boolean> fetchChainFrom(String url, PublishCardCommand command, ChainGap gap) {
    String login = command.card().login();
    ObjectNode payload = mapper.createObjectNode().put("login", login);
    if (gap.stored() != null) {
      payload.put("sinceEpoch", gap.stored().epoch()).put("sinceVersion", gap.stored().version());
    }
    return peers.call(url, Ops.GET_USER_CARD, payload).compose(answer -> {
      List<JsonNode> cards = new ArrayList<>();
      if (answer.path("chain").isArray() && gap.stored() != null) {
        answer.get("chain").forEach(cards::add);
      } else if (answer.has("card")) {
        cards.add(answer.get("card"));
      }
      Future<Void> applied = Future.succeededFuture();
      for (JsonNode node : cards.subList(0, Math.min(cards.size(), MAX_CHAIN))) {
        applied = applied.compose(v -> {
          UserCard next;
          try {
            next = CardJson.parse(node);
          } catch (ProtocolException e) {
            return Future.succeededFuture();
          }
          if (!next.login().equals(login)) {
            return Future.succeededFuture();
          }
          return publish(new PublishCardCommand(next, command.publisher(), command.inviteCode()), false)
              .<Void>mapEmpty().otherwiseEmpty();
        });
      }
      LOG.info("card chain fetched [login: {}, url: {}, cards: {}]", login, LogText.escape(url), cards.size());
      return applied.map(true);
    }).otherwise(failure -> {
      LOG.debug("card chain not fetched [login: {}, url: {}]: {}", login, LogText.escape(url),
          LogText.escape(String.valueOf(failure.getMessage())));
      return false;
    });
  }

  /**
   * Routes that name this server or a configured peer must use the URL this server has for it (else 409
   * {@code ROUTE_CONFLICT}); any other route's serverLogin must be its URL's host, lower-case (PROTOCOL §6a v3, else
   * 400 {@code ROUTE_NAME}), so a user cannot give a real server's name to a host of hers.
   */
  private void checkConfiguredRoutes(UserCard card) {
    for (UserCard.Route route : card.accessServers()) {
      if (route.serverLogin().equals(config.serverLogin())) {
        if (!config.ownUrl(route.url())) {
          throw routeConflict(route, config.publicUrl());
        }
        continue;
      }
      String known = config.peer(route.serverLogin()).map(AppConfig.Peer::url).orElse(null);
      if (known != null) {
        if (!known.equals(route.url())) {
          throw routeConflict(route, known);
        }
      } else if (!route.serverLogin().equals(WsUrls.host(route.url()))) {
        throw ProtocolException.badRequest(ErrorCode.ROUTE_NAME, "route " + route.serverLogin() + " must be named"
            + " after its URL's host (" + WsUrls.host(route.url()) + "): only this server's configured peers may"
            + " go by other names");
      }
    }
  }

  /**
   * The first route whose host is an IP literal the egress policy refuses (PROTOCOL §13): it could never be dialed.
   * A client's card, or any card of a login new here, with one is 400 {@code ROUTE_NOT_ALLOWED}; a card that a server
   * session relays for a login known here keeps its other fields and that route stays unreachable (every dial is
   * checked again), so a refused route of one server cannot freeze a user's card everywhere else.
   */
  private static Optional<UserCard.Route> refusedRoute(UserCard card, EgressPolicy egress) {
    return card.accessServers().stream().filter(route -> {
      InetAddress literal = Cidr.literal(WsUrls.host(route.url()));
      return literal != null && !egress.allows(literal);
    }).findFirst();
  }

  private static ProtocolException routeConflict(UserCard.Route route, String known) {
    return new ProtocolException(Status.CONFLICT, ErrorCode.ROUTE_CONFLICT, "server " + route.serverLogin()
        + " is at " + known + " here, not at " + route.url());
  }

  /**
   * PROTOCOL §13 admission of a login new to this server, inside the card's transaction. {@code open}: any card.
   * {@code served} and {@code invite}: a client may bring only a card that names this server, a server session
   * only one that names it or this server (else 403 {@code NOT_ACCESS_SERVER}); with {@code invite}, a card that
   * names this server (a user registering here, whoever brings it) also uses up one invite code (403
   * {@code INVITE_REQUIRED} without one, {@code INVITE_INVALID} for a code unknown, used or expired). The code is used
   * in the card's transaction, so a card refused later leaves it unused.
   */
  private Future<Void> admit(SqlConnection conn, PublishCardCommand command) {
    AppConfig.Registration registration = config.directory().registration();
    if (registration == AppConfig.Registration.OPEN) {
      return Future.succeededFuture();
    }
    UserCard card = command.card();
    boolean namesThisServer = card.servedBy(config.serverLogin());
    CardPublisher publisher = command.publisher();
    if (!namesThisServer && !(publisher.server() && card.servedBy(publisher.serverLogin()))) {
      return Future.failedFuture(new ProtocolException(Status.FORBIDDEN, ErrorCode.NOT_ACCESS_SERVER,
          card.login() + " is new to " + config.serverLogin() + ", and its card names neither this server"
              + (publisher.server() ? " nor " + publisher.serverLogin() : "") + " (directory.registration "
              + registration.name().toLowerCase(Locale.ROOT) + "): publish it on the servers it names"));
    }
    if (registration != AppConfig.Registration.INVITE || !namesThisServer) {
      return Future.succeededFuture();
    }
    if (command.inviteCode() == null) {
      return Future.failedFuture(new ProtocolException(Status.FORBIDDEN, ErrorCode.INVITE_REQUIRED,
          "registering " + card.login() + " on " + config.serverLogin() + " needs an invite code from its operator"
              + " (PublishUserCard {card, inviteCode})"));
    }
    return invites.use(conn, InviteCodes.hash(command.inviteCode()), card.login(), clock.millis())
        .compose(used -> used ? Future.<Void>succeededFuture() : Future.failedFuture(new ProtocolException(
            Status.FORBIDDEN, ErrorCode.INVITE_INVALID, "the invite code is unknown, used already or expired")))
        .onSuccess(v -> LOG.info("invite code used [login: {}]", card.login()));
  }

  /** Inside the card's transaction: each other server's URL is claimed (first card wins) or must match. */
  private Future<Void> claimRoutes(SqlConnection conn, UserCard card) {
    Future<Void> chain = Future.succeededFuture();
    for (UserCard.Route route : card.accessServers()) {
      if (route.serverLogin().equals(config.serverLogin()) || config.peer(route.serverLogin()).isPresent()) {
        continue;
      }
      chain = chain.compose(v -> servers.claimUrl(conn, route.serverLogin(), route.url()).compose(known ->
          known.equals(route.url()) ? Future.succeededFuture() : Future.failedFuture(routeConflict(route, known))));
    }
    return chain;
  }

  private Future<PublishResult> store(PublishCardCommand command, boolean mayFetchChain) {
    UserCard card = command.card();
    String cardJson = CardJson.render(mapper, card).toString();
    AppConfig.Delivery delivery = config.delivery();
    CardRules rules = new CardRules(clock.millis(), delivery.maxClockSkewMs(),
        delivery.lastPointMs() + delivery.maxClockSkewMs());
    return pool.withTransaction(conn -> repository.lock(conn, card.login()).compose(storedJson -> {
      UserCard stored = storedJson.map(this::storedCard).orElse(null);
      return repository.keyHistory(conn, card.login()).compose(history -> {
        CardRules.Verdict verdict = rules.judge(stored, history, card);
        if (verdict == CardRules.Verdict.UNCHANGED) {
          return Future.succeededFuture(new Stored(new PublishResult(card.login(), card.version(), false), Set.of()));
        }
        if (verdict == CardRules.Verdict.GAP
            || (stored == null && mayFetchChain && relayedFromElsewhere(command))) {
          return Future.failedFuture(new ChainGap(stored));
        }
        Set<String> newlyRevoked = new LinkedHashSet<>(card.revokedKeysB64());
        history.values().stream().filter(KeyHistoryEntry::revoked).map(KeyHistoryEntry::publicKeyB64)
            .forEach(newlyRevoked::remove);
        return accept(conn, command, stored, cardJson)
            .map(v -> new Stored(new PublishResult(card.login(), card.version(), true), newlyRevoked));
      });
    })).onSuccess(stored -> {
      if (stored.result().changed()) {
        LOG.info("card accepted [login: {}, epoch: {}, version: {}]", card.login(), card.epoch(), card.version());
        vertx.eventBus().publish(Addresses.DIRECTORY_CHANGED, card.login());
        if (!stored.newlyRevoked().isEmpty()) {
          LOG.info("keys revoked [login: {}, keys: {}]", card.login(), stored.newlyRevoked().size());
          List<String> revoked = List.copyOf(stored.newlyRevoked());
          vertx.eventBus().publish(Addresses.userEvents(card.login()), "", new DeliveryOptions()
              .addHeader(Addresses.REVOKED_KEYS_HEADER, String.join(",", revoked)));
          vertx.eventBus().send(Addresses.KEYS_REVOKED, new KeysRevoked(card.login(), revoked));
          hubTokens.revokeKeyFamilies(card.login(), revoked)
              .onSuccess(tokens -> LOG.info("hub token families of revoked keys ended [login: {}, tokens: {}]",
                  card.login(), tokens))
              .onFailure(failure -> LOG.warn("hub token families of revoked keys not ended [login: {}]: {}",
                  card.login(), LogText.escape(String.valueOf(failure.getMessage()))));
        }
        relay(card);
      }
    }).map(Stored::result);
  }

  /**
   * A card of a login new here that a server relays without being one of the login's routes (a correspondent's
   * server, say): first sight asks the card's own routes for the login's card, and keeps what follows from theirs
   * (PROTOCOL §4 v3). A client's card, or one its own server relays, is taken on first use.
   */
  private boolean relayedFromElsewhere(PublishCardCommand command) {
    CardPublisher publisher = command.publisher();
    UserCard card = command.card();
    return publisher.server() && !card.servedBy(publisher.serverLogin())
        && card.accessServers().stream().anyMatch(route -> !config.ownUrl(route.url()));
  }

  /** The stored card's JSON as a card (it was accepted, so it parses). */
  private UserCard storedCard(String json) {
    try {
      return CardJson.parse(mapper.readTree(json));
    } catch (java.io.IOException e) {
      throw new IllegalStateException("stored card is not JSON", e);
    }
  }

  /** Inside the card's transaction: the route and admission checks of a card the rules accepted, then the write. */
  private Future<Void> accept(SqlConnection conn, PublishCardCommand command, UserCard stored, String cardJson) {
    UserCard card = command.card();
    Optional<UserCard.Route> refused = refusedRoute(card, egress);
    if (refused.isPresent()) {
      if (stored == null || !command.publisher().server()) {
        return Future.failedFuture(ProtocolException.badRequest(ErrorCode.ROUTE_NOT_ALLOWED, "route "
            + refused.get().serverLogin() + " names an address this server does not dial (egress policy)"));
      }
      LOG.info("card kept with a route this server does not dial: it stays unreachable from here [login: {},"
          + " route: {}]", card.login(), refused.get().serverLogin());
    }
    Future<Void> admitted = stored != null ? Future.succeededFuture() : admit(conn, command);
    return admitted.compose(v -> claimRoutes(conn, card))
        .compose(v -> repository.store(conn, card, cardJson, clock.millis()))
        // the sync queue follows the user's servers (PROTOCOL §8); a card that keeps them costs it nothing
        .compose(serversChanged -> serversChanged ? outbox.followRoutes(conn, card.login())
            : Future.<Void>succeededFuture());
  }

  /**
   * Hands a newly accepted card where PROTOCOL §4 v3 and §13 say, and nowhere else (a server first seen in a card is
   * dialed only when a delivery, a sync or a chain fetch needs it): every configured peer, the servers whose key is
   * known here, and the servers of the users this login exchanged messages with in the last 30 days (at most
   * {@value #MAX_RELAY_TARGETS} in all). A server that already has it answers "unchanged" and relays nothing, so
   * relays end.
   */
  private void relay(UserCard card) {
    Set<String> urls = new LinkedHashSet<>();
    config.peers().stream().filter(p -> !card.v3() || readsV3Cards(p)).forEach(p -> urls.add(p.url()));
    servers.keyedServers(MAX_RELAY_TARGETS)
        .onSuccess(keyed -> keyed.forEach(server -> urls.add(server.url())))
        .compose(v -> repository.correspondentsRoutes(card.login(), clock.millis() - RELAY_WINDOW_MS,
            config.serverLogin(), MAX_RELAY_TARGETS))
        .onSuccess(routes -> routes.forEach(route -> urls.add(route.url())))
        .onComplete(ar -> {
          if (ar.failed()) {
            LOG.debug("card relay targets not all read [login: {}]: {}", card.login(), ar.cause().toString());
          }
          urls.removeIf(config::ownUrl);
          urls.stream().limit(MAX_RELAY_TARGETS).forEach(url -> {
            ObjectNode payload = mapper.createObjectNode();
            payload.set("card", CardJson.render(mapper, card));
            peers.call(url, Ops.PUBLISH_USER_CARD, payload).onFailure(failure -> LOG.debug(
                "card relay failed [login: {}, url: {}]: {}", card.login(), LogText.escape(url),
                LogText.escape(failure.getMessage())));
          });
        });
  }

  /** v1 and v2 peers never see v3 cards (PROTOCOL §4 v3): they would refuse them, or read them wrong. */
  private static boolean readsV3Cards(AppConfig.Peer peer) {
    return peer.protocol() == null || peer.protocol() == AppConfig.PeerProtocol.V3;
  }

  /**
   * On every (re)connection to a peer, hands it the cards of the users this server serves, so a peer that was
   * down while a card changed catches up (a card it has already is an unchanged no-op there). One at a time; a v3
   * card is not handed to a configured v1 or v2 peer.
   */
  public Future<Void> reannounce(String url) {
    boolean oldPeer = config.peers().stream().anyMatch(p -> p.url().equals(url) && !readsV3Cards(p));
    return repository.servedCards(config.serverLogin()).compose(cards -> {
      Future<Void> chain = Future.succeededFuture();
      for (String cardJson : cards) {
        chain = chain.compose(v -> {
          ObjectNode payload = mapper.createObjectNode();
          try {
            JsonNode card = mapper.readTree(cardJson);
            if (oldPeer && card.has("keys")) {
              return Future.succeededFuture();
            }
            payload.set("card", card);
          } catch (java.io.IOException e) {
            return Future.succeededFuture();
          }
          return peers.call(url, Ops.PUBLISH_USER_CARD, payload).<Void>mapEmpty().otherwiseEmpty();
        });
      }
      return chain.onSuccess(v -> LOG.debug("cards re-announced [url: {}, cards: {}]", url, cards.size()));
    });
  }

  /** The stored card of a login, or 404. */
  public Future<StoredUser> get(String login) {
    return repository.find(login).map(found -> found.orElseThrow(() -> ProtocolErrors.userNotFound(login)));
  }

  /**
   * The cards accepted here for a login after (sinceEpoch, sinceVersion), oldest first, at most {@value #MAX_CHAIN}
   * (GetUserCard with {@code since…}, PROTOCOL §4 v3); 404 when the login has no card here.
   */
  public Future<CardChain> chain(ChainQuery query) {
    return get(query.login()).compose(user -> repository.chain(query.login(), query.sinceEpoch(),
        query.sinceVersion(), MAX_CHAIN)).map(CardChain::new);
  }

  /** Outcome of a publish: {@code changed} is false for an identical re-publish. */
  public record PublishResult(String login, long version, boolean changed) {
  }

  /** GetUserCard's {@code since…}: the cards after this place in the login's order of cards. */
  public record ChainQuery(String login, long sinceEpoch, long sinceVersion) {
  }

  /** The JSON text of cards of one login, oldest first. */
  public record CardChain(List<String> cards) {
    public CardChain {
      cards = List.copyOf(cards);
    }
  }

  /** The keys a newly accepted card of {@code login} revoked (published on {@link Addresses#KEYS_REVOKED}). */
  public record KeysRevoked(String login, List<String> keysB64) {
    public KeysRevoked {
      keysB64 = List.copyOf(keysB64);
    }
  }

  /** What a stored card did, and which keys it revoked that were not revoked before. */
  private record Stored(PublishResult result, Set<String> newlyRevoked) {
  }

  /** The rules could not place the card's signer: fetch the chain. */
  private static final class ChainGap extends RuntimeException {
    private final transient UserCard stored;

    ChainGap(UserCard stored) {
      super("card chain gap", null, false, false);
      this.stored = stored;
    }

    UserCard stored() {
      return stored;
    }
  }
}
