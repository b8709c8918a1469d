package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;

/** A server event ({@code IncomingDirectMessage}, {@code DmDeliveryStateChanged}, ...) as one readable line. */
final class EventText {
  private EventText() {
  }

  static String describe(JsonNode event, boolean terminal) {
    JsonNode payload = event.path("payload");
    String op = event.path("op").asText();
    return switch (op) {
      case "IncomingDirectMessage", "OutgoingDirectMessage" -> message(payload, op, terminal);
      case "DmDeliveryStateChanged" -> Tick.of(payload.path("deliveryState").asText(), false).render(terminal)
          + " " + payload.path("baseKey").asText();
      case "DmReadReceipt" -> Tick.READ.render(terminal) + " " + payload.path("baseKey").asText() + " read by "
          + payload.path("readerLogin").asText() + " at " + MessageView.time(payload.path("readAtMs").asLong());
      case "DmReadByMe" -> "you read " + payload.path("baseKey").asText() + " on another device";
      default -> op + " " + payload;
    };
  }

  private static String message(JsonNode payload, String op, boolean terminal) {
    MessageView view = MessageView.of(payload.path("blobB64").asText());
    if (view == null) {
      return op + " (unreadable container) " + payload.path("messageKey").asText();
    }
    String tick = op.equals("OutgoingDirectMessage")
        ? "  " + Tick.of(payload.path("deliveryState").asText(), false).render(terminal) : "";
    return view.line() + tick + "  (" + view.baseKey() + ")";
  }
}
