package org.shine.server.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import java.util.Objects;
import java.util.Set;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.directory.CardJson;
import org.shine.server.directory.DirectoryService.PublishResult;
import org.shine.server.model.StoredUser;
import org.shine.server.model.UserCard;
import org.shine.server.protocol.Fields;
import org.shine.server.protocol.Frames;

/** The directory's ops (PROTOCOL §4, §5): PublishUserCard and GetUserCard, open to any session. */
final class CardHandler {
  private final EventBus bus;
  private final Frames frames;

  CardHandler(EventBus bus, Frames frames) {
    this.bus = Objects.requireNonNull(bus);
    this.frames = Objects.requireNonNull(frames);
  }

  Future<JsonNode> publishUserCard(Session session, JsonNode payload) {
    UserCard card = CardJson.parse(Fields.of(payload, "payload", Set.of("card")).required("card"));
    return BusReplies.<PublishResult>request(bus, Addresses.DIRECTORY_PUBLISH, card)
        .map(result -> frames.object().put("login", result.login()).put("version", result.version())
            .put("changed", result.changed()));
  }

  Future<JsonNode> getUserCard(Session session, JsonNode payload) {
    String login = Fields.of(payload, "payload", Set.of("login")).login("login");
    return BusReplies.<StoredUser>request(bus, Addresses.DIRECTORY_GET, login).map(user -> {
      try {
        ObjectNode response = frames.object();
        response.set("card", frames.mapper().readTree(user.cardJson()));
        return response;
      } catch (JsonProcessingException e) {
        throw new IllegalStateException("stored card of " + login + " is not JSON", e);
      }
    });
  }
}
