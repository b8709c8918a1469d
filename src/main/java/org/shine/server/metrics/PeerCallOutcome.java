package org.shine.server.metrics;

import java.util.Locale;

/** How a call to another server ended: the {@code outcome} tag of {@code shine_peer_calls_seconds}. */
public enum PeerCallOutcome {
  /** The peer answered 200. */
  OK,
  /** The peer answered with an error status. */
  REFUSED,
  /** No answer within the call timeout. */
  TIMEOUT,
  /** The peer could not be reached (down, connection lost, too many calls waiting). */
  UNAVAILABLE;

  /** The tag value: the name in lower case. */
  public String tag() {
    return name().toLowerCase(Locale.ROOT);
  }
}
