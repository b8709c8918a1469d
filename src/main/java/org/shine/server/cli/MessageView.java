package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.Locale;
import org.shine.server.client.MessageBody;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmFormatException;

/** One message as the command line shows it: who wrote to whom, when, its text (PROTOCOL §3 v2 or raw). */
record MessageView(String baseKey, String from, String to, long createdAtMs, long revision, String text) {
  private static final DateTimeFormatter DAY_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss", Locale.ROOT)
      .withZone(ZoneId.systemDefault());
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss", Locale.ROOT)
      .withZone(ZoneId.systemDefault());

  /** The view of a container in base64, or null when it does not parse. */
  static MessageView of(String blobB64) {
    DmContainer container;
    try {
      container = DmCodec.parse(Base64.getDecoder().decode(blobB64));
    } catch (DmFormatException | IllegalArgumentException e) {
      return null;
    }
    return new MessageView(container.baseKey(), container.from(), container.to(), container.createdAtMs(),
        container.revision(), MessageBody.text(container.body()));
  }

  /** The text of a container in base64, or a marker when it does not parse. */
  static String textOf(String blobB64) {
    MessageView view = of(blobB64);
    return view == null ? "(unreadable container)" : view.text();
  }

  /** One history line: time, direction, the tick of a sent message, the text, marks, the key. */
  static String historyLine(JsonNode entry, boolean terminal) {
    MessageView view = of(entry.path("blobB64").asText());
    if (view == null) {
      return "?  (unreadable container)  " + entry.path("baseKey").asText();
    }
    boolean outgoing = entry.path("direction").asText().equals("outgoing");
    String tick = outgoing ? Tick.of(entry.path("deliveryState").asText(null), entry.path("read").asBoolean())
        .render(terminal) + "  " : "";
    return DAY_TIME.format(Instant.ofEpochMilli(view.createdAtMs())) + "  " + view.from() + " → " + view.to() + "  "
        + tick + view.text() + marks(view.revision(), entry.path("deleted").asBoolean()) + "  (" + view.baseKey() + ")";
  }

  /** A chat line: time, author, text, marks; the tick of an own message is appended by the caller. */
  String chatLine(boolean deleted) {
    return TIME.format(Instant.ofEpochMilli(createdAtMs)) + " " + from + ": " + text + marks(revision, deleted);
  }

  /** An event line: time, author → recipient, text, marks. */
  String line() {
    return TIME.format(Instant.ofEpochMilli(createdAtMs)) + " " + from + " → " + to + ": " + text + marks(revision,
        false);
  }

  static String time(long epochMs) {
    return TIME.format(Instant.ofEpochMilli(epochMs));
  }

  private static String marks(long revision, boolean deleted) {
    return (revision > 0 ? " (edited)" : "") + (deleted ? " (deleted)" : "");
  }
}
