package org.shine.server.delivery;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The node's bound on delivery attempts (PROTOCOL §7.5): {@code delivery.maxInFlight} running plus
 * {@code delivery.queueCapacity} waiting in the one {@link DeliveryEngine} of the node. Every producer of attempts
 * (the request path of each delivery instance, the retry timer) reserves a place before it hands an attempt over,
 * so the engine's queue can never overflow; a producer that finds no place leaves the row to the retry worker.
 * Shared by the verticles of one node, hence thread-safe.
 */
public final class AttemptSlots {
  private final int capacity;
  private final AtomicInteger used = new AtomicInteger();

  public AttemptSlots(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive");
    }
    this.capacity = capacity;
  }

  /** Takes one place; false when all are taken. */
  public boolean reserve() {
    while (true) {
      int now = used.get();
      if (now >= capacity) {
        return false;
      }
      if (used.compareAndSet(now, now + 1)) {
        return true;
      }
    }
  }

  /** Gives a place back: an attempt finished, or a reservation will not be used. */
  public void release() {
    if (used.decrementAndGet() < 0) {
      used.incrementAndGet();
      throw new IllegalStateException("released more attempt places than were reserved");
    }
  }

  /** Places free right now. */
  public int free() {
    return capacity - used.get();
  }

  public int capacity() {
    return capacity;
  }
}
