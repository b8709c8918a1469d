package org.shine.server.util;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * At most {@code perWindow} grants per key in any window of {@code windowNanos} (a generic cell rate algorithm: a
 * burst of {@code perWindow}, then one more every window / {@code perWindow}), thread-safe and lock-free. A key's
 * cell is dropped once it has been idle long enough to be full again; at most {@code maxKeys} keys are tracked
 * (concurrent callers may pass the bound by one each), and a key new while that many are active is refused
 * ({@link Grant#FULL}) rather than let in without a limit. A full table is swept for idle cells at most every
 * {@link #SWEEP_EVERY_NANOS}, so a flood of new keys against a full table costs no scan of it per request.
 */
public final class PerKeyRate {
  /** The least time between two sweeps of a full table. */
  static final long SWEEP_EVERY_NANOS = 100_000_000L;
  private final long intervalNanos;
  private final long burstNanos;
  private final int maxKeys;
  private final LongSupplier nanoClock;
  private final ConcurrentHashMap<String, AtomicLong> theoreticalArrival = new ConcurrentHashMap<>();
  private final AtomicLong lastSweep;

  public PerKeyRate(int perWindow, long windowNanos, int maxKeys, LongSupplier nanoClock) {
    if (perWindow < 1 || windowNanos < perWindow || maxKeys < 1) {
      throw new IllegalArgumentException("perWindow, windowNanos and maxKeys must be positive");
    }
    this.intervalNanos = windowNanos / perWindow;
    this.burstNanos = intervalNanos * (perWindow - 1);
    this.maxKeys = maxKeys;
    this.nanoClock = nanoClock;
    this.lastSweep = new AtomicLong(nanoClock.getAsLong() - SWEEP_EVERY_NANOS);
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
        sweep(now);
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

  private void sweep(long now) {
    long last = lastSweep.get();
    if (now - last >= SWEEP_EVERY_NANOS && lastSweep.compareAndSet(last, now)) {
      theoreticalArrival.values().removeIf(cell -> cell.get() - now <= 0);
    }
  }

  /** Keys with a cell now. */
  public int tracked() {
    return theoreticalArrival.size();
  }
}
