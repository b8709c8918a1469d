package org.shine.server.gateway;

import java.util.concurrent.atomic.AtomicInteger;
import org.shine.server.util.PerKeyLimit;

/**
 * Open connections on this node's HTTP port, shared by every gateway instance: at most {@code max} in all and, when
 * {@code maxPerAddress} is above 0, at most that many from one remote address. Only addresses with an open
 * connection have an entry, so the map is bounded by {@code max}.
 */
public final class ConnectionBudget {
  private final int max;
  private final int maxPerAddress;
  private final AtomicInteger open = new AtomicInteger();
  private final PerKeyLimit perAddress;

  public ConnectionBudget(int max, int maxPerAddress) {
    this.max = max;
    this.maxPerAddress = maxPerAddress;
    this.perAddress = new PerKeyLimit(Math.max(1, maxPerAddress));
  }

  /** Takes a place for a connection from {@code address}; null when taken, else why not. */
  public String tryAcquire(String address) {
    if (open.incrementAndGet() > max) {
      open.decrementAndGet();
      return "this server holds its maximum of " + max + " connections";
    }
    if (maxPerAddress > 0 && !perAddress.tryAcquire(address)) {
      open.decrementAndGet();
      return "this server holds its maximum of " + maxPerAddress + " connections from one address";
    }
    return null;
  }

  /** Gives back a place taken by {@link #tryAcquire}. */
  public void release(String address) {
    open.decrementAndGet();
    if (maxPerAddress > 0) {
      perAddress.release(address);
    }
  }

  /** Connections open now. */
  public int open() {
    return open.get();
  }
}
