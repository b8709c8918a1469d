package org.shine.server.metrics;

import java.util.Locale;

/** A terminal delivery state a row moved to: the {@code state} tag of {@code shine_delivery_transitions_total}. */
public enum Transition {
  DELIVERED,
  FAILED;

  /** The tag value: the name in lower case. */
  public String tag() {
    return name().toLowerCase(Locale.ROOT);
  }
}
