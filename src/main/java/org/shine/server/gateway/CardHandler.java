package org.shine.server.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import java.util.Objects;
import java.util.Set;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.directory.CardJson;
import org.shine.server.directory.CardPublisher;
import org.shine.server.directory.InviteCodes;
import org.shine.server.directory.PublishCardCommand;
import org.shine.server.directory.DirectoryService;
import org.shine.server.directory.DirectoryService.PublishResult;
import org.shine.server.model.StoredUser;
import org.shine.server.model.UserCard;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Fields;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.ProtocolException;

/** The directory's ops (PROTOCOL §4, §5): PublishUserCard and GetUserCard, open to any session. */
final class CardHandler {
  private final EventBus bus;
  private final Frames frames;

  CardHandler(EventBus bus, Frames frames) {
    this.bus = Objects.requireNonNull(bus);
    this.frames = Objects.requireNonNull(frames);
  }

  /**
   * PublishUserCard {card, inviteCode?}: the directory learns who publishes (an authenticated server session, or a
   * client) from the session, never from the payload (PROTOCOL §13 admission).
   */
  Future<JsonNode> publishUserCard(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("card", "inviteCode"));
    UserCard card = CardJson.parse(fields.required("card"));
    String inviteCode = fields.has("inviteCode") ? fields.requiredString("inviteCode") : null;
    if (inviteCode != null && (inviteCode.isEmpty() || inviteCode.length() > InviteCodes.MAX_CODE_CHARS)) {
      throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "payload.inviteCode must be 1.."
          + InviteCodes.MAX_CODE_CHARS + " characters");
    }
    CardPublisher publisher = session.serverAuthenticated() ? CardPublisher.server(session.serverLogin)
        : CardPublisher.client();
    return BusReplies.<PublishResult>request(bus, Addresses.DIRECTORY_PUBLISH,
            new PublishCardCommand(card, publisher, inviteCode))
        .map(result -> frames.object().put("login", result.login()).put("version", result.version())
            .put("changed", result.changed()));
  }

  /**
   * GetUserCard {login, sinceEpoch?, sinceVersion?} → {card, chain?}: with {@code since…} (both or neither), the chain
   * of cards accepted here after that place, oldest first, ending with the current one (PROTOCOL §4 v3).
   */
  Future<JsonNode> getUserCard(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("login", "sinceEpoch", "sinceVersion"));
    String login = fields.login("login");
    if (fields.has("sinceEpoch") != fields.has("sinceVersion")) {
      throw ProtocolException.badRequest(ErrorCode.MISSING_FIELD, "payload.sinceEpoch and payload.sinceVersion go"
          + " together");
    }
    Future<StoredUser> card = BusReplies.request(bus, Addresses.DIRECTORY_GET, login);
    if (!fields.has("sinceEpoch")) {
      return card.map(user -> {
        ObjectNode response = frames.object();
        response.set("card", json(user.cardJson()));
        return response;
      });
    }
    DirectoryService.ChainQuery query = new DirectoryService.ChainQuery(login,
        fields.requiredLong("sinceEpoch", 0, CardJson.MAX_SAFE_INTEGER),
        fields.requiredLong("sinceVersion", 0, CardJson.MAX_SAFE_INTEGER));
    return card.compose(user -> BusReplies.<DirectoryService.CardChain>request(bus, Addresses.DIRECTORY_CHAIN, query)
        .map(chain -> {
          ObjectNode response = frames.object();
          response.set("card", json(user.cardJson()));
          ArrayNode cards = response.putArray("chain");
          chain.cards().forEach(text -> cards.add(json(text)));
          return response;
        }));
  }

  private JsonNode json(String cardJson) {
    try {
      return frames.mapper().readTree(cardJson);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a stored card is not JSON", e);
    }
  }
}
