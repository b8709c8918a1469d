package org.shine.server.metrics;

import java.util.Locale;

/**
 * Why a pulled sync item was ACKed and quarantined instead of stored (PROTOCOL §8 v3): the {@code reason} tag of
 * {@code shine_sync_quarantined_total}, and the reason code the quarantine table and the admin API show.
 */
public enum QuarantineReason {
  /** It does not parse, has the wrong kind for its type, bad base64 or a bad shape. */
  MALFORMED,
  /** A setting that would take its owner beyond twice a settings quota. */
  OVER_QUOTA,
  /** Its signature does not verify with the author's key, even after the author's card was refreshed. */
  BAD_SIGNATURE,
  /** Another container is stored under its key and revision (409 CONTENT_CONFLICT): it can never be stored. */
  CONFLICT;

  /** The tag value and reason code: the name in lower case. */
  public String tag() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The reason of a reason code read back from the table. */
  public static QuarantineReason ofTag(String tag) {
    return valueOf(tag.toUpperCase(Locale.ROOT));
  }
}
