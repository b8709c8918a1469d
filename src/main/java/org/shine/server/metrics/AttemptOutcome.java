package org.shine.server.metrics;

import java.util.Locale;

/** How one delivery attempt ended: the {@code outcome} tag of {@code shine_delivery_attempts_total}. */
public enum AttemptOutcome {
  /** A route (or the sender's sibling) acknowledged: delivered. */
  DELIVERED,
  /** No route acknowledged: the row waits for its next point, or failed after the last. */
  NOT_DELIVERED,
  /** Another worker changed the row meanwhile: this attempt's result was not recorded. */
  SUPERSEDED;

  /** The tag value: the name in lower case. */
  public String tag() {
    return name().toLowerCase(Locale.ROOT);
  }
}
