package org.shine.server.sync;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.SyncRepository.Sibling;
import org.shine.server.directory.CardJson;
import org.shine.server.directory.CardPublisher;
import org.shine.server.directory.DirectoryService.PublishResult;
import org.shine.server.directory.PublishCardCommand;
import org.shine.server.model.UserCard;
import org.shine.server.peer.PeerCalls;
import org.shine.server.protocol.Ops;
import org.shine.server.util.Json;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refreshes an author's card before a pulled item whose signature failed is checked again (PROTOCOL §8 v3): asks the
 * source sibling and the servers of the author's card as stored here ({@code GetUserCard}), and hands every card
 * received to the directory's own publish path, so only a valid newer card is accepted (a forged or older one
 * changes nothing). Never fails: a server that does not answer is logged at debug.
 */
final class CardRefresh {
  private static final Logger LOG = LoggerFactory.getLogger(CardRefresh.class);
  private final AppConfig config;
  private final EventBus bus;
  private final DirectoryRepository directory;
  private final PeerCalls peers;

  CardRefresh(AppConfig config, EventBus bus, DirectoryRepository directory, PeerCalls peers) {
    this.config = Objects.requireNonNull(config);
    this.bus = Objects.requireNonNull(bus);
    this.directory = Objects.requireNonNull(directory);
    this.peers = Objects.requireNonNull(peers);
  }

  /** Completes with whether a newer card of {@code author} was accepted here. */
  Future<Boolean> refresh(String author, Sibling source) {
    return directory.find(author).otherwise(Optional.empty()).compose(stored -> {
      // URL → the server that answers there (the directory's admission of a new login asks who brought a card)
      Map<String, String> servers = new LinkedHashMap<>();
      servers.put(source.url(), source.serverLogin());
      stored.ifPresent(user -> user.routes().stream()
          .filter(route -> !route.serverLogin().equals(config.serverLogin()) && !config.ownUrl(route.url()))
          .forEach(route -> servers.putIfAbsent(route.url(), route.serverLogin())));
      List<Future<Boolean>> asks = new ArrayList<>();
      servers.forEach((url, serverLogin) -> asks.add(fetchAndPublish(author, url, serverLogin)));
      return Future.join(new ArrayList<>(asks)).transform(done -> Future.succeededFuture(
          asks.stream().anyMatch(ask -> ask.succeeded() && ask.result())));
    });
  }

  private Future<Boolean> fetchAndPublish(String author, String url, String serverLogin) {
    return peers.call(url, Ops.GET_USER_CARD, Json.MAPPER.createObjectNode().put("login", author))
        .compose(answer -> publish(author, answer.path("card"), serverLogin))
        .onSuccess(changed -> LOG.info("card refreshed for a synced item [login: {}, from: {}, newer card: {}]",
            author, url, changed))
        .recover(failure -> {
          LOG.debug("card refresh failed [login: {}, url: {}]: {}", author, url, failure.getMessage());
          return Future.succeededFuture(false);
        });
  }

  /** Hands a fetched card to the directory as one that server brought (PROTOCOL §13 admission of a new login). */
  private Future<Boolean> publish(String author, JsonNode cardJson, String serverLogin) {
    UserCard card = CardJson.parse(cardJson);
    if (!card.login().equals(author)) {
      return Future.failedFuture("the answer is the card of " + card.login() + ", not of " + author);
    }
    return BusReplies.<PublishResult>request(bus, Addresses.DIRECTORY_PUBLISH,
        new PublishCardCommand(card, CardPublisher.server(serverLogin), null)).map(PublishResult::changed);
  }
}
