package org.shine.server.peer;

import java.util.function.LongSupplier;

/**
 * How often hearing from a peer may cut short the wait of a connection's retry (PROTOCOL §7.6: its server session to
 * this node was authenticated, so the dial or the probe that waits for its backoff goes now): at most once per
 * {@code interval}. A peer that logs in again and again, while refusing our dials or leaving our calls unanswered,
 * so makes this node dial or probe it at most once per interval beside the reconnect loop's own capped backoff. A
 * retry moved to later than now (the last one went less than an interval ago) takes its place at once, so words
 * heard meanwhile move nothing. Confined to the connection's event loop.
 */
final class HeardFromPacing {
  private final long intervalNanos;
  private final LongSupplier nanoClock;
  private boolean cut;
  /** Before this (in {@code nanoClock} time) no retry may be moved: one an interval after the last moved. */
  private long nextNanos;

  /** {@code nanoClock}: a monotonic time ({@link System#nanoTime()} outside tests). */
  HeardFromPacing(long intervalMs, LongSupplier nanoClock) {
    if (intervalMs <= 0) {
      throw new IllegalArgumentException("intervalMs must be positive");
    }
    this.intervalNanos = intervalMs * 1_000_000L;
    this.nanoClock = nanoClock;
  }

  /**
   * The peer was heard from while a retry waits {@code pendingMs} more: the wait it gets now (0: go now), counted as
   * this interval's one move; or -1 when it keeps its own wait, which is no longer than the pacing allows.
   */
  long heard(long pendingMs) {
    long now = nanoClock.getAsLong();
    long earliest = cut && nextNanos - now > 0 ? nextNanos : now;
    long waitNanos = earliest - now;
    if (waitNanos >= pendingMs * 1_000_000L) {
      return -1;
    }
    cut = true;
    nextNanos = earliest + intervalNanos;
    return (waitNanos + 999_999) / 1_000_000;
  }
}
