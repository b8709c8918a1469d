package org.shine.server.util;

/**
 * Paces a periodic job through trouble: after a failed run the next one waits twice the period, then four times,
 * up to {@code maxMs}; a run that succeeds (or {@link #reset}) brings the period back. It tells its owner only when
 * the state changes, so a long outage is two log lines, not one per tick. Not thread-safe: one owner, one loop.
 */
public final class Backoff {
  private final long periodMs;
  private final long maxMs;
  private int failures;
  private long delayMs;
  private long notBeforeNanos;
  private long failingSinceNanos;

  public Backoff(long periodMs, long maxMs) {
    if (periodMs <= 0 || maxMs < periodMs) {
      throw new IllegalArgumentException("need 0 < periodMs <= maxMs: " + periodMs + ", " + maxMs);
    }
    this.periodMs = periodMs;
    this.maxMs = maxMs;
    this.delayMs = periodMs;
  }

  /** Whether a run may start at {@code nowNanos} (a monotonic time, {@link System#nanoTime()}). */
  public boolean due(long nowNanos) {
    return failures == 0 || nowNanos - notBeforeNanos >= 0;
  }

  /** A run failed at {@code nowNanos}; true when this starts a failing spell (the one time to say so). */
  public boolean failed(long nowNanos) {
    failures++;
    if (failures == 1) {
      failingSinceNanos = nowNanos;
    }
    delayMs = failures >= 62 ? maxMs : Math.min(maxMs, periodMs << Math.min(failures, 30));
    notBeforeNanos = nowNanos + delayMs * 1_000_000L;
    return failures == 1;
  }

  /** A run succeeded; true when this ends a failing spell. */
  public boolean succeeded() {
    return reset();
  }

  /** Back to the plain period (the trouble is known to be over); true when it was backing off. */
  public boolean reset() {
    boolean wasFailing = failures > 0;
    failures = 0;
    delayMs = periodMs;
    return wasFailing;
  }

  public boolean backingOff() {
    return failures > 0;
  }

  /** The wait after the last failure (the period when not backing off). */
  public long delayMs() {
    return delayMs;
  }

  /** Failed runs in the current spell. */
  public int failures() {
    return failures;
  }

  /** How long the current failing spell has lasted at {@code nowNanos} (0 when not failing). */
  public long failingForMs(long nowNanos) {
    return failures == 0 ? 0 : (nowNanos - failingSinceNanos) / 1_000_000L;
  }
}
