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
}
