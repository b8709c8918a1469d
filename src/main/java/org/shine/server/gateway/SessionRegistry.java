package org.shine.server.gateway;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The users logged in on this node and their number of sessions (the admin API's view, PROTOCOL §12), shared by
 * every gateway instance. An entry lives while its user has a session here, so the map is bounded by
 * {@code limits.maxConnections}.
 */
public final class SessionRegistry {
  private final Map<String, AtomicInteger> sessions = new ConcurrentHashMap<>();

  /** A session of {@code login} logged in. */
  void opened(String login) {
    sessions.computeIfAbsent(login, l -> new AtomicInteger()).incrementAndGet();
  }

  /** A logged-in session of {@code login} closed. */
  void closed(String login) {
    sessions.computeIfPresent(login, (l, count) -> count.decrementAndGet() <= 0 ? null : count);
  }

  /** The sessions {@code login} has open on this node. */
  public int sessionsOf(String login) {
    AtomicInteger count = sessions.get(login);
    return count == null ? 0 : count.get();
  }
}
