package org.shine.server.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import java.util.Base64;
import java.util.Objects;
import java.util.Set;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.delivery.ConversationPage;
import org.shine.server.delivery.HistoryPage;
import org.shine.server.delivery.SendPairCommand;
import org.shine.server.delivery.SendPairResult;
import org.shine.server.delivery.SignalCommand;
import org.shine.server.delivery.SignalService;
import org.shine.server.model.ConversationEntry;
import org.shine.server.model.ConversationQuery;
import org.shine.server.model.HistoryEntry;
import org.shine.server.model.HistoryQuery;
import org.shine.server.protocol.Fields;
import org.shine.server.protocol.Frames;

/**
 * A logged-in user's messages (PROTOCOL §5): SendMessagePair, GetDirectMessages, GetConversations, SendReadReceipt
 * and DeleteMessage, each on behalf of the session's login.
 */
final class MessageHandler {
  private static final int MAX_HISTORY_PAGE = 200;
  private static final int DEFAULT_HISTORY_PAGE = 50;
  private static final int MAX_CONVERSATIONS_PAGE = 100;
  private static final int DEFAULT_CONVERSATIONS_PAGE = 50;
  private final EventBus bus;
  private final Frames frames;

  MessageHandler(EventBus bus, Frames frames) {
    this.bus = Objects.requireNonNull(bus);
    this.frames = Objects.requireNonNull(frames);
  }

  Future<JsonNode> sendMessagePair(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("incomingBlobB64", "outgoingBlobB64"));
    byte[] incoming = Containers.field(fields, "incomingBlobB64");
    byte[] outgoing = Containers.field(fields, "outgoingBlobB64");
    return BusReplies.<SendPairResult>request(bus, Addresses.DM_SEND_PAIR,
            new SendPairCommand(session.login, incoming, outgoing, session.id()))
        .map(result -> frames.object()
            .put("baseKey", result.baseKey())
            .put("incomingKey", result.incomingKey())
            .put("outgoingKey", result.outgoingKey())
            .put("deliveryState", result.deliveryState().wire()));
  }

  Future<JsonNode> sendReadReceipt(Session session, JsonNode payload) {
    byte[] receipt = Containers.field(Fields.of(payload, "payload", Set.of("receiptBlobB64")), "receiptBlobB64");
    return BusReplies.<SignalService.SignalResult>request(bus, Addresses.DM_READ_RECEIPT,
            new SignalCommand(session.login, receipt, session.id()))
        .map(result -> frames.object().put("receiptKey", result.signalKey()).put("baseKey", result.ref())
            .put("deliveryState", result.deliveryState().wire()));
  }

  Future<JsonNode> deleteMessage(Session session, JsonNode payload) {
    byte[] tombstone = Containers.field(Fields.of(payload, "payload", Set.of("tombstoneBlobB64")),
        "tombstoneBlobB64");
    return BusReplies.<SignalService.SignalResult>request(bus, Addresses.DM_DELETE,
            new SignalCommand(session.login, tombstone, session.id()))
        .map(result -> frames.object().put("tombstoneKey", result.signalKey()).put("messageKey", result.ref()));
  }

  Future<JsonNode> getDirectMessages(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("peer", "beforeCreatedAtMs", "limit"));
    String peer = fields.login("peer");
    long before = fields.optionalLong("beforeCreatedAtMs", 0, Long.MAX_VALUE, Long.MAX_VALUE);
    int limit = (int) fields.optionalLong("limit", 1, MAX_HISTORY_PAGE, DEFAULT_HISTORY_PAGE);
    return BusReplies.<HistoryPage>request(bus, Addresses.DM_HISTORY,
        new HistoryQuery(session.login, peer, before, limit)).map(this::renderHistory);
  }

  Future<JsonNode> getConversations(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("beforeLastAtMs", "limit"));
    long before = fields.optionalLong("beforeLastAtMs", 0, Long.MAX_VALUE, Long.MAX_VALUE);
    int limit = (int) fields.optionalLong("limit", 1, MAX_CONVERSATIONS_PAGE, DEFAULT_CONVERSATIONS_PAGE);
    return BusReplies.<ConversationPage>request(bus, Addresses.DM_CONVERSATIONS,
        new ConversationQuery(session.login, before, limit)).map(this::renderConversations);
  }

  private JsonNode renderConversations(ConversationPage page) {
    ObjectNode response = frames.object();
    ArrayNode list = response.putArray("conversations");
    Base64.Encoder base64 = Base64.getEncoder();
    for (ConversationEntry entry : page.conversations()) {
      list.addObject()
          .put("peer", entry.peer())
          .put("lastMessageKey", entry.lastMessageKey())
          .put("lastAtMs", entry.lastAtMs())
          .put("lastDirection", entry.lastOutgoing() ? "outgoing" : "incoming")
          .put("unread", entry.unread())
          .put("lastBlobB64", base64.encodeToString(entry.lastBlob()));
    }
    response.put("hasMore", page.hasMore());
    return response;
  }

  private JsonNode renderHistory(HistoryPage page) {
    ObjectNode response = frames.object();
    ArrayNode list = response.putArray("messages");
    Base64.Encoder base64 = Base64.getEncoder();
    for (HistoryEntry entry : page.messages()) {
      ObjectNode item = list.addObject()
          .put("messageKey", entry.messageKey())
          .put("baseKey", entry.baseKey())
          .put("direction", entry.outgoing() ? "outgoing" : "incoming")
          .put("blobB64", base64.encodeToString(entry.blob()))
          .put("revision", entry.revision());
      if (entry.deliveryState() != null) {
        item.put("deliveryState", entry.deliveryState().wire());
      }
      item.put("read", entry.read()).put("deleted", entry.deleted());
    }
    response.put("hasMore", page.hasMore());
    return response;
  }
}
