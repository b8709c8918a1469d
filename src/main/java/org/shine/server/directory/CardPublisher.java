package org.shine.server.directory;

import java.util.Objects;

/**
 * Who hands a card to this server (PROTOCOL §13 admission): a client session (logged in or not) or the authenticated
 * server session of {@code serverLogin}. An old peer relaying on an anonymous session is a client here.
 */
public record CardPublisher(String serverLogin) {
  private static final CardPublisher CLIENT = new CardPublisher(null);

  /** A client, or any caller without a server session. */
  public static CardPublisher client() {
    return CLIENT;
  }

  /** The authenticated server session of {@code serverLogin}. */
  public static CardPublisher server(String serverLogin) {
    return new CardPublisher(Objects.requireNonNull(serverLogin));
  }

  /** True for a server session. */
  public boolean server() {
    return serverLogin != null;
  }

  @Override
  public String toString() {
    return serverLogin == null ? "a client" : "server " + serverLogin;
  }
}
