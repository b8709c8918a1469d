package org.shine.server.hub;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Concurrent long polls per user on this node, shared by every gateway instance: at most {@code perUser} at
 * once. Only users with a poll in progress have an entry, so the map is bounded by the polls being held.
 */
public final class HubPollLimits {
  private final int perUser;
  private final ConcurrentHashMap<String, Integer> active = new ConcurrentHashMap<>();

  public HubPollLimits(int perUser) {
    this.perUser = perUser;
  }

  public int perUser() {
    return perUser;
  }

  /** Takes a place for one poll of {@code login}; false when the user already holds {@code perUser}. */
  public boolean tryAcquire(String login) {
    boolean[] taken = {false};
    active.compute(login, (key, n) -> {
      int current = n == null ? 0 : n;
      if (current >= perUser) {
        return n;
      }
      taken[0] = true;
      return current + 1;
    });
    return taken[0];
  }

  /** Gives back a place taken by {@link #tryAcquire}. */
  public void release(String login) {
    active.computeIfPresent(login, (key, n) -> n > 1 ? n - 1 : null);
  }

  /** Polls of {@code login} held now. */
  public int active(String login) {
    return active.getOrDefault(login, 0);
  }
}
