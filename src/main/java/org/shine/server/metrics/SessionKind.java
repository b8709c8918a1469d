package org.shine.server.metrics;

import java.util.Locale;

/** What a WebSocket session is logged in as: the {@code kind} tag of {@code shine_ws_sessions}. */
public enum SessionKind {
  /** A user, after AuthLogin. */
  CLIENT,
  /** Another server, after ServerAuthLogin. */
  SERVER,
  /** Not logged in (yet, or an old peer using the open ops). */
  UNAUTHENTICATED;

  /** The tag value: the name in lower case. */
  public String tag() {
    return name().toLowerCase(Locale.ROOT);
  }
}
