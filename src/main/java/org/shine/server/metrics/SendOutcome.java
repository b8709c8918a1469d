package org.shine.server.metrics;

import java.util.Locale;

/** How a SendMessagePair ended: the {@code outcome} tag of {@code shine_sends_total}. */
public enum SendOutcome {
  /** Stored; the first attempt got an ACK before the answer. */
  DELIVERED,
  /** Stored; not delivered yet (the schedule carries it). */
  ACCEPTED,
  /** Stored; its delivery already failed (an identical repeat of a failed message). */
  FAILED,
  /** Refused as invalid or not allowed (4xx but 429): nothing stored. */
  REFUSED,
  /** Refused for load (429, 503): nothing stored, the client retries. */
  OVERLOADED,
  /** An internal error (500): nothing stored. */
  ERROR;

  /** The tag value: the name in lower case. */
  public String tag() {
    return name().toLowerCase(Locale.ROOT);
  }
}
