package org.shine.server.gateway;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The per-user write rate of this node ({@code limits.sendsPerUserPerS}, PROTOCOL §11), shared by every gateway
 * instance: a generic cell rate algorithm per login, lock-free, allowing a burst of one second's worth. A login's
 * cell is dropped once it has been idle long enough to be full again, so the map holds only recently active users
 * and at most {@code maxUsers} of them.
 */
public final class SendRateLimiter {
  private final long intervalNanos;
  private final long burstNanos;
  private final int maxUsers;
  private final LongSupplier nanoClock;
  private final ConcurrentHashMap<String, AtomicLong> theoreticalArrival = new ConcurrentHashMap<>();

  public SendRateLimiter(int perSecond, int maxUsers, LongSupplier nanoClock) {
    this.intervalNanos = 1_000_000_000L / perSecond;
    this.burstNanos = intervalNanos * (perSecond - 1);
    this.maxUsers = maxUsers;
    this.nanoClock = nanoClock;
  }

  /** True when {@code login} may write now (and the write is counted). */
  public boolean tryAcquire(String login) {
    long now = nanoClock.getAsLong();
    if (theoreticalArrival.size() >= maxUsers) {
      theoreticalArrival.values().removeIf(tat -> tat.get() - now <= 0);
    }
    AtomicLong tat = theoreticalArrival.computeIfAbsent(login, key -> new AtomicLong(now));
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

  /** Logins with a cell now. */
  public int tracked() {
    return theoreticalArrival.size();
  }
}
