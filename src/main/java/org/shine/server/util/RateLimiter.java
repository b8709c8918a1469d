package org.shine.server.util;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * At most {@code perSecond} events per key and second, with a burst of one second's worth (a generic cell rate
 * algorithm per key, lock-free, thread-safe). A key's cell is dropped once it has been idle long enough to be full
 * again; at most {@code maxKeys} keys are tracked, and a new key that finds the table full of busy keys is refused
 * (a limit of abuse fails closed rather than growing without bound).
 */
public final class RateLimiter {
  private final long intervalNanos;
  private final long burstNanos;
  private final int maxKeys;
  private final LongSupplier nanoClock;
  private final ConcurrentHashMap<String, AtomicLong> theoreticalArrival = new ConcurrentHashMap<>();

  public RateLimiter(double perSecond, int maxKeys, LongSupplier nanoClock) {
    if (perSecond <= 0 || maxKeys < 1) {
      throw new IllegalArgumentException("perSecond and maxKeys must be positive");
    }
    this.intervalNanos = Math.max(1, (long) (1_000_000_000L / perSecond));
    this.burstNanos = (long) (intervalNanos * Math.max(0, perSecond - 1));
    this.maxKeys = maxKeys;
    this.nanoClock = nanoClock;
  }

  /** True when {@code key} may have one more event now (and it is counted). */
  public boolean tryAcquire(String key) {
    long now = nanoClock.getAsLong();
    AtomicLong tat = theoreticalArrival.get(key);
    if (tat == null) {
      if (theoreticalArrival.size() >= maxKeys) {
        theoreticalArrival.values().removeIf(cell -> cell.get() - now <= 0);
        if (theoreticalArrival.size() >= maxKeys) {
          return false;
        }
      }
      tat = theoreticalArrival.computeIfAbsent(key, k -> new AtomicLong(now));
    }
    while (true) {
      long current = tat.get();
      long start = current - now > 0 ? current : now;
      if (start - now > burstNanos) {
        return false;
      }
      if (tat.compareAndSet(current, start + intervalNanos)) {
        return true;
      }
    }
  }

  /** Keys with a cell now. */
  public int tracked() {
    return theoreticalArrival.size();
  }
}
