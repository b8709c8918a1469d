package org.shine.server.delivery;

import java.time.Clock;
import java.util.Objects;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;

/**
 * The author's clock against ours ({@code delivery.maxClockSkewMs}, PROTOCOL §5 v3). Each rule is a check run only
 * for a container that is not an identical repeat (a repeat is answered from the stored bytes first, so a resend
 * after ten minutes is still an ACK). Nothing is created in the future: every container, whatever its kind or
 * revision, may be at most the skew ahead of our clock when a session sends it, and twice the skew (two clocks)
 * when another server hands it on (a server op or a sync page). Only the past bound is waived where lateness is
 * normal: a session's revision-0 message (kinds 1–2) must also be within the skew behind, while an edit (it keeps
 * its createdAtMs, so an old message stays editable), a receipt or a tombstone may be of any age, and so may
 * whatever a server hands on (retries and forwards arrive late by design).
 */
final class ClockSkew {
  private final Clock clock;
  private final long maxSkewMs;

  ClockSkew(Clock clock, long maxSkewMs) {
    this.clock = Objects.requireNonNull(clock);
    this.maxSkewMs = maxSkewMs;
  }

  /** The rule for a container a user's session sends (SendMessagePair, SendReadReceipt, DeleteMessage). */
  Runnable forSession(DmContainer container) {
    return () -> {
      long now = clock.millis();
      notAhead(container, now, maxSkewMs);
      if (hasPastBound(container) && container.createdAtMs() < saturatedAdd(now, -maxSkewMs)) {
        throw ProtocolException.badRequest(ErrorCode.CLOCK_SKEW, "createdAtMs " + container.createdAtMs()
            + " is more than " + maxSkewMs + " ms behind the server clock (" + now + ")");
      }
    };
  }

  /** The rule for a container another server hands on (ReceiveIncomingMessage, ReceiveOutcomingMessage, sync). */
  Runnable forServerOp(DmContainer container) {
    return () -> notAhead(container, clock.millis(), saturatedAdd(maxSkewMs, maxSkewMs));
  }

  private static void notAhead(DmContainer container, long now, long limitMs) {
    if (container.createdAtMs() > saturatedAdd(now, limitMs)) {
      throw ProtocolException.badRequest(ErrorCode.CLOCK_SKEW, "createdAtMs " + container.createdAtMs()
          + " is more than " + limitMs + " ms ahead of the server clock (" + now + "): nothing is created in the"
          + " future");
    }
  }

  /** A new message from a session: revision 0 of kind 1 or 2. */
  private static boolean hasPastBound(DmContainer container) {
    return container.revision() == 0
        && (container.kind() == DmKind.INCOMING || container.kind() == DmKind.OUTGOING);
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    if (((a ^ sum) & (b ^ sum)) < 0) {
      return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return sum;
  }
}
