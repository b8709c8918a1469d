package org.shine.server.util;

import java.util.concurrent.ConcurrentHashMap;

/**
 * At most {@code perKey} places taken at once per key, thread-safe. Only keys with a place taken have an entry, so
 * the map is bounded by the places held.
 */
public final class PerKeyLimit {
  private final int perKey;
  private final ConcurrentHashMap<String, Integer> taken = new ConcurrentHashMap<>();

  public PerKeyLimit(int perKey) {
    this.perKey = perKey;
  }

  public int perKey() {
    return perKey;
  }

  /** Takes a place for {@code key}; false when it already holds {@code perKey}. */
  public boolean tryAcquire(String key) {
    boolean[] acquired = {false};
    taken.compute(key, (k, n) -> {
      int current = n == null ? 0 : n;
      if (current >= perKey) {
        return n;
      }
      acquired[0] = true;
      return current + 1;
    });
    return acquired[0];
  }

  /** Gives back a place taken by {@link #tryAcquire}. */
  public void release(String key) {
    taken.computeIfPresent(key, (k, n) -> n > 1 ? n - 1 : null);
  }

  /** Places {@code key} holds now. */
  public int held(String key) {
    return taken.getOrDefault(key, 0);
  }
}
