package org.shine.server.util;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * At most {@code perWindow} grants per key in any window of {@code windowNanos} (a generic cell rate algorithm: a
 * burst of {@code perWindow}, then one more every window / {@code perWindow}), thread-safe and lock-free. A key's
 * cell is dropped once it has been idle long enough to be full again; at most {@code maxKeys} keys are tracked
 * (concurrent callers may pass the bound by one each), and a key new while that many are active is refused
 * ({@link Grant#FULL}) rather than let in without a limit.
 */
public final class PerKeyRate {
  private final long intervalNanos;
  private final long burstNanos;
  private final int maxKeys;
  private final LongSupplier nanoClock;
  private final ConcurrentHashMap<String, AtomicLong> theoreticalArrival = new ConcurrentHashMap<>();

  public PerKeyRate(int perWindow, long windowNanos, int maxKeys, LongSupplier nanoClock) {
    if (perWindow < 1 || windowNanos < perWindow || maxKeys < 1) {
      throw new IllegalArgumentException("perWindow, windowNanos and maxKeys must be positive");
    }
    this.intervalNanos = windowNanos / perWindow;
    this.burstNanos = intervalNanos * (perWindow - 1);
    this.maxKeys = maxKeys;
    this.nanoClock = nanoClock;
  }

  /** The answer to one request. */
  public enum Grant {
    /** Granted (and counted). */
    GRANTED,
    /** This key has used its grants of the window. */
    LIMITED,
    /** A new key while {@code maxKeys} keys are active. */
    FULL
  }

  /** Whether {@code key} may go now; a grant is counted, a refusal is not. */
  public Grant tryAcquire(String key) {
    long now = nanoClock.getAsLong();
    AtomicLong tat = theoreticalArrival.get(key);
    if (tat == null) {
      if (theoreticalArrival.size() >= maxKeys) {
        theoreticalArrival.values().removeIf(cell -> cell.get() - now <= 0);
        if (theoreticalArrival.size() >= maxKeys) {
          return Grant.FULL;
        }
      }
      tat = theoreticalArrival.computeIfAbsent(key, k -> new AtomicLong(now));
    }
    while (true) {
      long current = tat.get();
      long start = current - now > 0 ? current : now;
      if (start - now > burstNanos) {
        return Grant.LIMITED;
      }
      if (tat.compareAndSet(current, start + intervalNanos)) {
        return Grant.GRANTED;
      }
    }
  }

  /** Keys with a cell now. */
  public int tracked() {
    return theoreticalArrival.size();
  }
}
