package org.shine.server.util;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Paces a periodic job through trouble: after a failed run the next one waits twice the period, then four times,
 * up to {@code maxMs}; a run that succeeds (or {@link #reset}) brings the period back. It tells its owner only when
 * the state changes, so a long outage is two log lines, not one per tick. A retry loop with no period of its own
 * ({@link #retries}) waits its first delay after the first failure, then twice that, up to the cap. Not thread-safe:
 * one owner, one loop.
 */
public final class Backoff {
  private final long periodMs;
  private final long firstDelayMs;
  private final long maxMs;
  private int failures;
  private long delayMs;
  private long notBeforeNanos;
  private long failingSinceNanos;

  public Backoff(long periodMs, long maxMs) {
    this(periodMs, periodMs > maxMs / 2 ? maxMs : periodMs * 2, maxMs);
  }

  private Backoff(long periodMs, long firstDelayMs, long maxMs) {
    if (periodMs <= 0 || maxMs < periodMs) {
      throw new IllegalArgumentException("need 0 < periodMs <= maxMs: " + periodMs + ", " + maxMs);
    }
    this.periodMs = periodMs;
    this.firstDelayMs = firstDelayMs;
    this.maxMs = maxMs;
    this.delayMs = periodMs;
  }

  /**
   * For a loop that retries after a failure (a reconnect, a login, a probe): the first wait is {@code firstDelayMs},
   * each further failure doubles it up to {@code maxMs}; {@link #delayMs()} is the first delay while nothing fails.
   */
  public static Backoff retries(long firstDelayMs, long maxMs) {
    return new Backoff(firstDelayMs, firstDelayMs, maxMs);
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
    int doublings = failures - 1;
    delayMs = doublings >= Long.numberOfLeadingZeros(firstDelayMs) - 1 ? maxMs
        : Math.min(maxMs, firstDelayMs << doublings);
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

  /**
   * The wait after the last failure, drawn evenly from its upper half ({@code delayMs/2 .. delayMs}), so that many
   * loops that failed together do not all retry at the same instant.
   */
  public long jitteredDelayMs() {
    return jitter(delayMs);
  }

  /** A wait drawn evenly from {@code delayMs/2 .. delayMs}. */
  public static long jitter(long delayMs) {
    return delayMs / 2 + ThreadLocalRandom.current().nextLong(delayMs / 2 + 1);
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
