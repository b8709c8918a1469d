package org.shine.server.model;

import java.util.List;
import java.util.Optional;
import org.shine.server.dm.Ed25519Signer;

/** A user as stored: key (also decoded, for verification), card version and text, and the current routes. */
public record StoredUser(String login, byte[] publicKey, Ed25519Signer.PublicKey verifier, long version,
    String cardJson, List<UserCard.Route> routes) {
  public StoredUser {
    routes = List.copyOf(routes);
  }

  public StoredUser(String login, byte[] publicKey, long version, String cardJson, List<UserCard.Route> routes) {
    this(login, publicKey, Ed25519Signer.publicKey(publicKey), version, cardJson, routes);
  }

  public boolean servedBy(String serverLogin) {
    return urlOf(serverLogin).isPresent();
  }

  /** The URL of this user's route to {@code serverLogin}, if it is one of the user's access servers. */
  public Optional<String> urlOf(String serverLogin) {
    return routes.stream().filter(r -> r.serverLogin().equals(serverLogin)).map(UserCard.Route::url).findFirst();
  }
}
