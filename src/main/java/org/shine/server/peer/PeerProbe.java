package org.shine.server.peer;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.shine.server.util.Backoff;

/**
 * Whether a destination has stopped answering (PROTOCOL §13): its last {@code delivery.timeoutsToDown} calls timed
 * out, or its socket held more than {@code limits.writeQueueBytes} unsent. Either makes it down exactly as a failed
 * connect does (§7.6: calls fail at once), and it stays down, across reconnects, until a probe is answered: the
 * last call it left unanswered, sent again (the server ops are idempotent), one at a time, after a delay that
 * doubles up to the §7.6 cap. A connect that succeeds proves nothing here: a tarpit completes its handshakes.
 * Confined to the connection's event loop.
 */
final class PeerProbe {
  private static final long FIRST_DELAY_MS = 250;
  private final int timeoutsToDown;
  private int timeoutsInARow;
  private boolean holdingDown;
  private final Backoff delays;
  private String op;
  private ObjectNode payload;

  PeerProbe(int timeoutsToDown, long maxDelayMs) {
    if (timeoutsToDown < 1 || maxDelayMs < FIRST_DELAY_MS) {
      throw new IllegalArgumentException("timeoutsToDown must be positive, the delay cap at least "
          + FIRST_DELAY_MS + " ms");
    }
    this.timeoutsToDown = timeoutsToDown;
    this.delays = Backoff.retries(FIRST_DELAY_MS, maxDelayMs);
  }

  /**
   * A call timed out; true when that makes the destination down now (the last calls all timed out). While it is
   * down already, the probe stays the call that made it so (not, say, a login on a new connection).
   */
  boolean timedOut(String timedOutOp, ObjectNode timedOutPayload) {
    if (holdingDown) {
      return false;
    }
    remember(timedOutOp, timedOutPayload);
    timeoutsInARow++;
    return timeoutsInARow >= timeoutsToDown && holdDown();
  }

  /** The socket would not take a call's bytes; true when that makes the destination down now. */
  boolean unread(String unsentOp, ObjectNode unsentPayload) {
    if (holdingDown) {
      return false;
    }
    remember(unsentOp, unsentPayload);
    return holdDown();
  }

  int timeoutsToDown() {
    return timeoutsToDown;
  }

  /** A call was answered: whatever it was, the timeouts before it are no longer "the last calls". */
  void answered() {
    timeoutsInARow = 0;
  }

  /** The probe was answered: the destination is up again. */
  void up() {
    holdingDown = false;
    timeoutsInARow = 0;
    delays.reset();
  }

  /** True while the destination is down because its calls went unanswered. */
  boolean holdsDown() {
    return holdingDown;
  }

  /** The wait before the next probe (then twice that, up to the cap). */
  long nextDelayMs() {
    delays.failed(System.nanoTime());
    return delays.delayMs();
  }

  /** The wait the last probe took (the first delay before any). */
  long delayMs() {
    return delays.delayMs();
  }

  String op() {
    return op;
  }

  ObjectNode payload() {
    return payload;
  }

  private void remember(String lastOp, ObjectNode lastPayload) {
    this.op = lastOp;
    this.payload = lastPayload;
  }

  private boolean holdDown() {
    holdingDown = true;
    delays.reset();
    return true;
  }
}
