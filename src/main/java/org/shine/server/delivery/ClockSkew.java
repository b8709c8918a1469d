package org.shine.server.delivery;

import java.time.Clock;
import java.util.Objects;
import org.shine.server.dm.DmContainer;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;

/**
 * The author's clock against ours ({@code delivery.maxClockSkewMs}, PROTOCOL §5 v2). Each rule is a check run only
 * for a container that is not an identical repeat (a repeat is answered from the stored bytes first, so a resend
 * after ten minutes is still an ACK): what a session sends must be within the skew on revision 0 (an edit keeps its
 * createdAtMs, so an old message stays editable); what a server op brings may be late (retries and forwards arrive
 * late by design) but not beyond the skew in the future.
 */
final class ClockSkew {
  private final Clock clock;
  private final long maxSkewMs;

  ClockSkew(Clock clock, long maxSkewMs) {
    this.clock = Objects.requireNonNull(clock);
    this.maxSkewMs = maxSkewMs;
  }

  /** The rule for a container a user's session sends. */
  Runnable forSession(DmContainer container) {
    return () -> {
      if (container.revision() != 0) {
        return;
      }
      long skew = Math.abs(container.createdAtMs() - clock.millis());
      if (skew > maxSkewMs) {
        throw ProtocolException.badRequest(ErrorCode.CLOCK_SKEW, "createdAtMs is " + skew
            + " ms away from the server clock; the limit is " + maxSkewMs + " ms");
      }
    };
  }

  /** The rule for a container another server hands on (a server op or a sync page). */
  Runnable forServerOp(DmContainer container) {
    return () -> {
      long ahead = container.createdAtMs() - clock.millis();
      if (ahead > maxSkewMs) {
        throw ProtocolException.badRequest(ErrorCode.CLOCK_SKEW, "createdAtMs is " + ahead
            + " ms ahead of the server clock; the limit is " + maxSkewMs + " ms");
      }
    };
  }
}
