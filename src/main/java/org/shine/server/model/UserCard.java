package org.shine.server.model;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

/** A user's signed directory card (PROTOCOL §4). */
public record UserCard(String login, String publicKeyB64, List<Route> accessServers, long version,
    String signatureB64) {

  public UserCard {
    Objects.requireNonNull(login);
    Objects.requireNonNull(publicKeyB64);
    accessServers = List.copyOf(accessServers);
    Objects.requireNonNull(signatureB64);
  }

  /** The exact UTF-8 bytes the card's signature covers. */
  public byte[] signedBytes() {
    StringBuilder text = new StringBuilder("SHiNE_CARD|").append(login).append('|').append(publicKeyB64).append('|')
        .append(version);
    for (Route route : accessServers) {
      text.append('|').append(route.serverLogin()).append('=').append(route.url());
    }
    return text.toString().getBytes(StandardCharsets.UTF_8);
  }

  public boolean servedBy(String serverLogin) {
    return accessServers.stream().anyMatch(r -> r.serverLogin().equals(serverLogin));
  }

  /** One access server of a user. */
  public record Route(String serverLogin, String url) {
    public Route {
      Objects.requireNonNull(serverLogin);
      Objects.requireNonNull(url);
    }
  }
}
