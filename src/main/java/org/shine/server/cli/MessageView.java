package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.Locale;
import org.shine.server.client.BodyReader;
import org.shine.server.client.Verdict;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmFormatException;

/**
 * One message as the command line shows it: who wrote to whom, when, its text (PROTOCOL §3 v2 or raw) — or, when its
 * container does not verify against the author's card (PROTOCOL §13), a red "not verified" mark in place of the text,
 * never the text itself.
 */
record MessageView(String baseKey, String from, String to, long createdAtMs, long revision, String text,
    Verdict verdict, BodyReader.Kind body) {
  private static final String RED = "\u001b[31m";
  private static final String DIM = "\u001b[90m";
  private static final String DELETED = "(message deleted)";
  private static final DateTimeFormatter DAY_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss", Locale.ROOT)
      .withZone(ZoneId.systemDefault());
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss", Locale.ROOT)
      .withZone(ZoneId.systemDefault());

  /** A message of the user's own, as typed here: shown with its text and no mark. */
  static MessageView own(String baseKey, String from, String to, long createdAtMs, long revision, String text) {
    return new MessageView(baseKey, from, to, createdAtMs, revision, text, Verdict.VERIFIED, BodyReader.Kind.PLAIN);
  }

  /**
   * The view of a container in base64 with what its check found, its body read by {@code reader} (decrypted, or
   * marked), or null when it does not parse.
   */
  static MessageView of(String blobB64, Verdict verdict, BodyReader reader) {
    DmContainer container;
    try {
      container = DmCodec.parse(Base64.getDecoder().decode(blobB64));
    } catch (DmFormatException | IllegalArgumentException e) {
      return null;
    }
    BodyReader.Read read = reader.read(container);
    return new MessageView(container.baseKey(), container.from(), container.to(), container.createdAtMs(),
        container.revision(), read.readable() ? read.text() : BodyReader.CANNOT_DECRYPT, verdict, read.kind());
  }

  /** The text of a plaintext container in base64, or a marker when it does not parse (for scripts and tests). */
  static String textOf(String blobB64) {
    return textOf(blobB64, BodyReader.plain(""));
  }

  /** The text of a container in base64 as {@code reader} reads it, or a marker when it does not parse or open. */
  static String textOf(String blobB64, BodyReader reader) {
    MessageView view = of(blobB64, Verdict.VERIFIED, reader);
    return view == null ? "(unreadable container)" : view.text();
  }

  /** True when the body opened or was plaintext (its text is the author's words). */
  boolean readable() {
    return body != BodyReader.Kind.UNREADABLE;
  }

  /** True when the text may be shown as the author's. */
  boolean verified() {
    return verdict.trusted();
  }

  /**
   * The text as shown: the author's words when verified, else the mark saying why not; a body this device cannot
   * open as {@code [cannot decrypt on this device]}, never as text.
   */
  String shown(boolean terminal) {
    if (!verified()) {
      return notVerified(verdict.reason(), terminal);
    }
    if (!readable()) {
      String mark = "[" + BodyReader.CANNOT_DECRYPT + "]";
      return terminal ? RED + mark + Tick.RESET : mark;
    }
    return text;
  }

  /** {@code [! not verified: reason]}, red on a terminal. */
  static String notVerified(String reason, boolean terminal) {
    String mark = "[! not verified: " + reason + "]";
    return terminal ? RED + mark + Tick.RESET : mark;
  }

  /**
   * Adds to a JSON line what a script needs: {@code "verified"} and the {@code "text"} of a verified container, or
   * {@code "verified": false} and {@code "verifyFailure"} (the reason) and no text.
   */
  static void annotate(ObjectNode json, String blobB64, Verdict verdict, BodyReader reader) {
    if (verdict.outcome() == Verdict.Outcome.NO_CONTAINER) {
      return;
    }
    json.put("verified", verdict.outcome() == Verdict.Outcome.VERIFIED);
    if (verdict.outcome() == Verdict.Outcome.VERIFIED) {
      MessageView view = blobB64 == null ? null : of(blobB64, verdict, reader);
      if (view != null) {
        json.put("encrypted", view.body() == BodyReader.Kind.ENCRYPTED || view.body() == BodyReader.Kind.UNREADABLE);
        if (view.readable()) {
          json.put("text", view.text());
        } else {
          json.put("decryptFailure", BodyReader.CANNOT_DECRYPT);
        }
        if (view.body() == BodyReader.Kind.SENT_UNENCRYPTED) {
          json.put("sentUnencrypted", true);
        }
      }
    } else {
      json.put("verifyFailure", verdict.reason());
    }
  }

  /** One history line: time, direction, the tick of a sent message, the text (or its mark), marks, the key. */
  static String historyLine(JsonNode entry, Verdict verdict, BodyReader reader, boolean terminal) {
    MessageView view = of(entry.path("blobB64").asText(), verdict, reader);
    if (view == null) {
      return "?  " + notVerified("unreadable container", terminal) + "  " + entry.path("baseKey").asText();
    }
    boolean outgoing = entry.path("direction").asText().equals("outgoing");
    String tick = outgoing && view.verified() ? Tick.of(entry.path("deliveryState").asText(null),
        entry.path("read").asBoolean()).render(terminal) + "  " : "";
    return DAY_TIME.format(Instant.ofEpochMilli(view.createdAtMs())) + "  " + view.from() + " → " + view.to() + "  "
        + tick + view.content(entry.path("deleted").asBoolean(), terminal) + "  (" + view.baseKey() + ")";
  }

  /**
   * A chat line: time, author, text (or its mark), marks; the tick of an own message is appended by the caller. A
   * deleted message shows as deleted, never with its text.
   */
  String chatLine(boolean deleted, boolean terminal) {
    return TIME.format(Instant.ofEpochMilli(createdAtMs)) + " " + from + ": " + content(deleted, terminal);
  }

  /** What a line shows of the message: its text and marks, its not-verified mark, or that it was deleted. */
  private String content(boolean deleted, boolean terminal) {
    if (deleted && verified()) {
      return terminal ? DIM + DELETED + Tick.RESET : DELETED;
    }
    return shown(terminal) + marks();
  }

  /** An event line: time, author → recipient, text (or its mark), marks. */
  String line(boolean terminal) {
    return TIME.format(Instant.ofEpochMilli(createdAtMs)) + " " + from + " → " + to + ": " + shown(terminal)
        + marks();
  }

  static String time(long epochMs) {
    return TIME.format(Instant.ofEpochMilli(epochMs));
  }

  private String marks() {
    if (!verified()) {
      return "";
    }
    return (revision > 0 ? " (edited)" : "") + (body == BodyReader.Kind.SENT_UNENCRYPTED
        ? " [" + BodyReader.SENT_UNENCRYPTED + "]" : "");
  }
}
