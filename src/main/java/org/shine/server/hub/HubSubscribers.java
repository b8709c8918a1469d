package org.shine.server.hub;

import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The users this node knows to poll the hub, shared by every verticle of the node: a write builds the hub entry of
 * an event (its JSON body) only for them, so the events of everyone else cost nothing more. The database decides
 * who gets an entry (a statement queues entries only for rows of {@code hub_subscriber}); this set only saves the
 * work for the rest, so it errs on the side of "polls": until it is loaded, and once it holds {@code capacity}
 * logins, every user counts as one. Thread-safe.
 */
public final class HubSubscribers {
  private final Set<String> logins = ConcurrentHashMap.newKeySet();
  private final int capacity;
  private volatile boolean loaded;

  public HubSubscribers(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive");
    }
    this.capacity = capacity;
  }

  /** False only when {@code login} surely does not poll. */
  public boolean mayPoll(String login) {
    return !loaded || logins.size() >= capacity || logins.contains(login);
  }

  /** A user that polls from now on (on any node). */
  public void add(String login) {
    if (logins.size() < capacity) {
      logins.add(login);
    }
  }

  /** The subscribers stored when the node starts; from then on the set answers. */
  public void load(Collection<String> stored) {
    stored.forEach(this::add);
    loaded = true;
  }
}
