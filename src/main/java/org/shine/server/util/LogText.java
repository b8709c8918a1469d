package org.shine.server.util;

/**
 * Text another party chose (a peer's error message, a URL from a card) made safe for one log line: control
 * characters (line breaks included) become {@code \\uXXXX}, and it is cut to a bounded length, so a peer can neither
 * forge log lines nor flood the log.
 */
public final class LogText {
  /** Characters kept of one foreign text. */
  public static final int MAX_CHARS = 200;

  private LogText() {
  }

  public static String escape(String text) {
    if (text == null) {
      return "null";
    }
    StringBuilder out = new StringBuilder(Math.min(text.length(), MAX_CHARS) + 8);
    for (int i = 0; i < text.length(); i++) {
      if (out.length() >= MAX_CHARS) {
        return out.append("...(").append(text.length()).append(" chars)").toString();
      }
      char c = text.charAt(i);
      if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\u2028' || c == '\u2029') {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }
}
