package org.shine.server.model;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.shine.server.dm.CardText;

/**
 * A user's signed directory card (PROTOCOL §4). A v1 card ({@code publicKeyB64}) is held as a v3 card of epoch 0 with
 * that one device key, signed by it, and keeps its v1 form ({@code v3} false) for its signed text and its JSON.
 * Optional keys are null when absent; lists are empty when absent.
 */
public record UserCard(String login, long epoch, long version, List<DeviceKey> keys, String recoveryKeyB64,
    String encryptionKeyB64, List<RetiredKey> retiredKeys, List<String> revokedKeysB64, List<Route> accessServers,
    String signerKeyB64, String signatureB64, boolean v3) {

  public UserCard {
    Objects.requireNonNull(login);
    keys = List.copyOf(keys);
    retiredKeys = List.copyOf(retiredKeys);
    revokedKeysB64 = List.copyOf(revokedKeysB64);
    accessServers = List.copyOf(accessServers);
    Objects.requireNonNull(signerKeyB64);
    Objects.requireNonNull(signatureB64);
  }

  /** A v1 card: one key, which signs it. */
  public static UserCard v1(String login, String publicKeyB64, List<Route> accessServers, long version,
      String signatureB64) {
    return new UserCard(login, 0, version, List.of(new DeviceKey(publicKeyB64, null)), null, null, List.of(),
        List.of(), accessServers, publicKeyB64, signatureB64, false);
  }

  /** The exact UTF-8 bytes the card's signature covers. */
  public byte[] signedBytes() {
    List<Map.Entry<String, String>> routes = new ArrayList<>(accessServers.size());
    accessServers.forEach(route -> routes.add(Map.entry(route.serverLogin(), route.url())));
    if (!v3) {
      return CardText.v1(login, signerKeyB64, version, routes);
    }
    List<Map.Entry<String, Long>> retired = new ArrayList<>(retiredKeys.size());
    retiredKeys.forEach(key -> retired.add(Map.entry(key.publicKeyB64(), key.retiredAtMs())));
    return CardText.v3(login, epoch, version, deviceKeysB64(), recoveryKeyB64, encryptionKeyB64, retired,
        revokedKeysB64, routes);
  }

  /** The device keys, base64, in card order. */
  public List<String> deviceKeysB64() {
    return keys.stream().map(DeviceKey::publicKeyB64).toList();
  }

  /** Whether this card comes after {@code other} in the order of cards: (epoch, version). */
  public boolean after(long otherEpoch, long otherVersion) {
    return epoch != otherEpoch ? epoch > otherEpoch : version > otherVersion;
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

  /** A current device key and its label (not signed; null when the card gives none). */
  public record DeviceKey(String publicKeyB64, String label) {
    public DeviceKey {
      Objects.requireNonNull(publicKeyB64);
    }
  }

  /** A key the card retired (a rotation) and when; it signs nothing new after its window (PROTOCOL §4 v3). */
  public record RetiredKey(String publicKeyB64, long retiredAtMs) {
    public RetiredKey {
      Objects.requireNonNull(publicKeyB64);
    }
  }
}
