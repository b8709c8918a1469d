package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import org.shine.server.client.BodyReader;
import org.shine.server.client.Verdict;

/**
 * A server event ({@code IncomingDirectMessage}, {@code DmDeliveryStateChanged}, ...) as one readable line, with what
 * the check of its container found (a container that does not verify is shown as such, never as its author's words).
 */
final class EventText {
  private EventText() {
  }

  static String describe(JsonNode event, Verdict verdict, BodyReader reader, boolean terminal) {
    JsonNode payload = event.path("payload");
    String op = event.path("op").asText();
    return switch (op) {
      case "IncomingDirectMessage", "OutgoingDirectMessage" -> message(payload, op, verdict, reader, terminal);
      case "DmDeliveryStateChanged" -> Tick.of(payload.path("deliveryState").asText(), false).render(terminal)
          + " " + payload.path("baseKey").asText();
      case "DmReadReceipt" -> verdict.trusted()
          ? Tick.READ.render(terminal) + " " + payload.path("baseKey").asText() + " read by "
              + payload.path("readerLogin").asText() + " at " + MessageView.time(payload.path("readAtMs").asLong())
          : MessageView.notVerified(verdict.reason(), terminal) + " a read receipt for "
              + payload.path("baseKey").asText();
      case "DmReadByMe" -> "you read " + payload.path("baseKey").asText() + " on another device";
      default -> op + " " + payload;
    };
  }

  private static String message(JsonNode payload, String op, Verdict verdict, BodyReader reader,
      boolean terminal) {
    MessageView view = MessageView.of(payload.path("blobB64").asText(), verdict, reader);
    if (view == null) {
      return op + " " + MessageView.notVerified("unreadable container", terminal) + " "
          + payload.path("messageKey").asText();
    }
    String tick = op.equals("OutgoingDirectMessage") && view.verified()
        ? "  " + Tick.of(payload.path("deliveryState").asText(), false).render(terminal) : "";
    return view.line(terminal) + tick + "  (" + view.baseKey() + ")";
  }
}
