package org.shine.server.util;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * At most {@code events} per {@code periodNanos} for each key, with a burst of one period's worth (a generic cell
 * rate algorithm: one theoretical arrival time per key), thread-safe and lock-free. The table holds at most
 * {@code maxKeys} cells: a cell that is full again (idle for a whole period) says nothing a new cell would not, so
 * it is dropped when room is needed (by one sweep at most every {@link #SWEEP_EVERY_NANOS}); while the table is
 * full of live cells, every key without a cell shares one overflow cell of the same rate. So a caller who invents
 * keys faster than they expire gets no more than one key's rate out of it, and the memory stays bounded.
 */
public final class PerKeyRate {
  /** A full table is swept for idle cells at most this often, so a flood of new keys costs no scan per call. */
  static final long SWEEP_EVERY_NANOS = 100_000_000L;
  private final long intervalNanos;
  private final long burstNanos;
  private final int maxKeys;
  private final LongSupplier nanoClock;
  private final ConcurrentHashMap<String, AtomicLong> cells = new ConcurrentHashMap<>();
  private final AtomicLong overflow;
  private final AtomicLong lastSweep;

  /** {@code events} (≥ 1) per {@code periodNanos} per key, for at most {@code maxKeys} keys at once. */
  public PerKeyRate(long events, long periodNanos, int maxKeys, LongSupplier nanoClock) {
    if (events < 1 || periodNanos < events || maxKeys < 1) {
      throw new IllegalArgumentException("events, periodNanos and maxKeys must be positive, periodNanos >= events");
    }
    this.intervalNanos = periodNanos / events;
    this.burstNanos = intervalNanos * (events - 1);
    this.maxKeys = maxKeys;
    this.nanoClock = nanoClock;
    long now = nanoClock.getAsLong();
    this.overflow = new AtomicLong(now);
    this.lastSweep = new AtomicLong(now - SWEEP_EVERY_NANOS);
  }

  /** True when {@code key} may act now (and the act is counted); a refusal is not counted. */
  public boolean tryAcquire(String key) {
    long now = nanoClock.getAsLong();
    AtomicLong cell = cells.get(key);
    if (cell == null) {
      cell = cellFor(key, now);
    }
    while (true) {
      long arrival = cell.get();
      long start = arrival - now > 0 ? arrival : now;
      if (start - now > burstNanos) {
        return false;
      }
      if (cell.compareAndSet(arrival, start + intervalNanos)) {
        return true;
      }
    }
  }

  /** Keys with a cell of their own now (at most {@code maxKeys}). */
  public int tracked() {
    return cells.size();
  }

  private AtomicLong cellFor(String key, long now) {
    if (cells.size() >= maxKeys) {
      sweep(now);
      if (cells.size() >= maxKeys) {
        return overflow;
      }
    }
    // two threads may both pass the size check: the table may exceed maxKeys by the number of threads at most
    return cells.computeIfAbsent(key, k -> new AtomicLong(now));
  }

  private void sweep(long now) {
    long last = lastSweep.get();
    if (now - last < SWEEP_EVERY_NANOS || !lastSweep.compareAndSet(last, now)) {
      return;
    }
    cells.values().removeIf(arrival -> arrival.get() - now <= 0);
  }
}
