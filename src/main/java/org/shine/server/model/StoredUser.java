package org.shine.server.model;

import java.util.List;
import java.util.Optional;
import org.shine.server.dm.KeyRing;

/**
 * A user as stored: the card's place in the order of cards (epoch, version), its text, the keys its signatures are
 * checked against (current, retired, revoked: PROTOCOL §4 v3), and the current routes.
 */
public record StoredUser(String login, long epoch, long version, KeyRing keys, String cardJson,
    List<UserCard.Route> routes) {
  public StoredUser {
    routes = List.copyOf(routes);
  }

  /** A user of a v1 card: one key (tests and stand-ins). */
  public StoredUser(String login, byte[] publicKey, long version, String cardJson, List<UserCard.Route> routes) {
    this(login, 0, version, KeyRing.single(publicKey), cardJson, routes);
  }

  public boolean servedBy(String serverLogin) {
    return urlOf(serverLogin).isPresent();
  }

  /** The URL of this user's route to {@code serverLogin}, if it is one of the user's access servers. */
  public Optional<String> urlOf(String serverLogin) {
    return routes.stream().filter(r -> r.serverLogin().equals(serverLogin)).map(UserCard.Route::url).findFirst();
  }
}
