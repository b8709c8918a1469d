package org.shine.server.delivery;

import java.time.Clock;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;

/** The author's clock must be within {@code delivery.maxClockSkewMs} of ours for what a session sends. */
final class ClockSkew {
  private ClockSkew() {
  }

  static void require(long createdAtMs, Clock clock, long maxSkewMs) {
    long skew = Math.abs(createdAtMs - clock.millis());
    if (skew > maxSkewMs) {
      throw ProtocolException.badRequest(ErrorCode.CLOCK_SKEW, "createdAtMs is " + skew
          + " ms away from the server clock; the limit is " + maxSkewMs + " ms");
    }
  }
}
