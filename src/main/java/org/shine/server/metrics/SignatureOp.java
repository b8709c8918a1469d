package org.shine.server.metrics;

import java.util.Locale;

/** What a signature check verifies: the {@code op} tag of {@code shine_signature_verifications_total}. */
public enum SignatureOp {
  /** A message container (incoming or outgoing copy). */
  MESSAGE,
  /** A read receipt. */
  RECEIPT,
  /** A tombstone (DeleteMessage). */
  TOMBSTONE,
  /** A user card (PublishUserCard, a relayed card). */
  CARD,
  /** A user's AuthLogin challenge. */
  AUTH_LOGIN,
  /** Another server's login (PROTOCOL §6a). */
  SERVER_LOGIN,
  /** A hub token request's challenge (PROTOCOL §10). */
  HUB_TOKEN;

  /** The tag value: the name in lower case. */
  public String tag() {
    return name().toLowerCase(Locale.ROOT);
  }
}
