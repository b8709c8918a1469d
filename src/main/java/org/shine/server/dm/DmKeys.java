package org.shine.server.dm;

/** Builds the string keys of PROTOCOL §3: {@code baseKey = from|to|createdAtMs|nonce}, {@code messageKey = baseKey|kind}. */
public final class DmKeys {
  private DmKeys() {
  }

  public static String baseKey(String from, String to, long createdAtMs, long nonce) {
    return from + '|' + to + '|' + createdAtMs + '|' + nonce;
  }

  public static String messageKey(String baseKey, DmKind kind) {
    return baseKey + '|' + kind.code();
  }

  public static String incomingKey(String baseKey) {
    return messageKey(baseKey, DmKind.INCOMING);
  }

  public static String outgoingKey(String baseKey) {
    return messageKey(baseKey, DmKind.OUTGOING);
  }

  /** A baseKey ({@code kind} 0) or messageKey split into its parts, or null when it is not well formed. */
  public static ParsedKey parseBaseKey(String key) {
    return parse(key, 4);
  }

  /** A messageKey split into its parts ({@code kind} 1..4), or null when it is not well formed. */
  public static ParsedKey parseMessageKey(String key) {
    ParsedKey parsed = parse(key, 5);
    return parsed == null || DmKind.fromCode(parsed.kind()) == null ? null : parsed;
  }

  /**
   * Splits {@code key} only when it is written exactly as {@link #baseKey} and {@link #messageKey} write it: ASCII
   * digits without a sign or leading zeros, so that one message has one key (Java's number parsing alone would also
   * take other scripts' digits, a plus sign and leading zeros).
   */
  private static ParsedKey parse(String key, int parts) {
    String[] split = key == null ? new String[0] : key.split("\\|", -1);
    if (split.length != parts || !Logins.isValid(split[0]) || !Logins.isValid(split[1])) {
      return null;
    }
    for (int i = 2; i < parts; i++) {
      if (!isCanonicalNumber(split[i])) {
        return null;
      }
    }
    try {
      return new ParsedKey(split[0], split[1], Long.parseLong(split[2]), Long.parseLong(split[3]),
          parts == 5 ? Integer.parseInt(split[4]) : 0);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** Plain decimal as {@code Long.toString} writes a non-negative number (at most 19 digits, "0" or no leading 0). */
  private static boolean isCanonicalNumber(String part) {
    if (part.isEmpty() || part.length() > 19 || (part.length() > 1 && part.charAt(0) == '0')) {
      return false;
    }
    for (int i = 0; i < part.length(); i++) {
      if (part.charAt(i) < '0' || part.charAt(i) > '9') {
        return false;
      }
    }
    return true;
  }

  /** The parts of a key; {@code kind} is 0 for a baseKey. */
  public record ParsedKey(String from, String to, long createdAtMs, long nonce, int kind) {
    public String baseKey() {
      return DmKeys.baseKey(from, to, createdAtMs, nonce);
    }
  }
}
