package org.shine.server.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.shine.server.dm.CardText;
import org.shine.server.dm.Ed25519Signer;

/**
 * The keys a user's card lets sign containers, read from the card JSON a server serves (PROTOCOL §4). A client reads
 * keys from a card here and nowhere else: a v1 card's one {@code publicKeyB64}, or a v3 card's device and retired
 * keys, once the card names the login asked for and its own signature verifies.
 */
public final class CardKeys {
  private CardKeys() {
  }

  /**
   * The keys of {@code login}'s card, or none with the problem in words a user reads. Verifies the card's signature:
   * CPU work for a worker thread. A v3 card (PROTOCOL §4 v3) must be signed by one of its device keys, its recovery
   * key or a key it retired (a rotation signed by the retiring device); its messages verify with its device keys and
   * its retired keys (history written before a rotation), never with a revoked key.
   */
  public static Keys of(String login, JsonNode card) {
    Objects.requireNonNull(login);
    if (card == null || !card.isObject() || !login.equals(card.path("login").asText(null))) {
      return Keys.unusable(login, "the card served for " + login + " is not " + login + "'s");
    }
    if (!card.has("publicKeyB64") && card.has("keys")) {
      return v3(login, card);
    }
    byte[] publicKey;
    byte[] signature;
    try {
      publicKey = Base64.getDecoder().decode(card.path("publicKeyB64").asText(""));
      signature = Base64.getDecoder().decode(card.path("signatureB64").asText(""));
    } catch (IllegalArgumentException e) {
      return Keys.unusable(login, login + "'s card is malformed");
    }
    if (publicKey.length != Ed25519Signer.PUBLIC_KEY_SIZE || signature.length != Ed25519Signer.SIGNATURE_SIZE
        || !card.path("version").canConvertToExactIntegral() || !card.path("accessServers").isArray()) {
      return Keys.unusable(login, login + "'s card is malformed");
    }
    byte[] signed = signedText(login, card.get("publicKeyB64").asText(), card.get("version").asLong(),
        routes(card)).getBytes(StandardCharsets.UTF_8);
    Ed25519Signer.PublicKey key = Ed25519Signer.publicKey(publicKey);
    if (!key.verify(signed, 0, signed.length, signature, 0)) {
      return Keys.unusable(login, login + "'s card is not signed by its key");
    }
    return new Keys(login, List.of(key), null);
  }

  private static Keys v3(String login, JsonNode card) {
    try {
      List<String> devices = new ArrayList<>();
      card.get("keys").forEach(key -> devices.add(text(key.get("publicKeyB64"))));
      String recovery = card.hasNonNull("recoveryKeyB64") ? text(card.get("recoveryKeyB64")) : null;
      String encryption = card.hasNonNull("encryptionKeyB64") ? text(card.get("encryptionKeyB64")) : null;
      List<Map.Entry<String, Long>> retired = new ArrayList<>();
      card.path("retiredKeys").forEach(key -> retired.add(Map.entry(text(key.get("publicKeyB64")),
          key.get("retiredAtMs").longValue())));
      List<String> revoked = new ArrayList<>();
      card.path("revokedKeysB64").forEach(key -> revoked.add(text(key)));
      String signer = text(card.get("signerKeyB64"));
      byte[] signature = Base64.getDecoder().decode(text(card.get("signatureB64")));
      boolean ownSigner = devices.contains(signer) || signer.equals(recovery)
          || retired.stream().anyMatch(entry -> entry.getKey().equals(signer));
      if (devices.isEmpty() || !ownSigner || signature.length != Ed25519Signer.SIGNATURE_SIZE) {
        return Keys.unusable(login, login + "'s card is malformed");
      }
      byte[] signed = CardText.v3(login, card.get("epoch").longValue(), card.get("version").longValue(), devices,
          recovery, encryption, retired, revoked, routes(card));
      if (!Ed25519Signer.verify(Base64.getDecoder().decode(signer), signed, signature)) {
        return Keys.unusable(login, login + "'s card is not signed by its key");
      }
      List<Ed25519Signer.PublicKey> keys = new ArrayList<>();
      devices.forEach(key -> keys.add(Ed25519Signer.publicKey(Base64.getDecoder().decode(key))));
      retired.forEach(entry -> keys.add(Ed25519Signer.publicKey(Base64.getDecoder().decode(entry.getKey()))));
      return new Keys(login, keys, null);
    } catch (RuntimeException e) {
      return Keys.unusable(login, login + "'s card is malformed");
    }
  }

  /** A required text field (a missing one is a malformed card). */
  private static String text(JsonNode node) {
    if (node == null || !node.isTextual()) {
      throw new IllegalArgumentException("not a string");
    }
    return node.asText();
  }

  private static List<Map.Entry<String, String>> routes(JsonNode card) {
    List<Map.Entry<String, String>> routes = new ArrayList<>();
    for (JsonNode route : card.get("accessServers")) {
      routes.add(Map.entry(route.path("serverLogin").asText(), route.path("url").asText()));
    }
    return routes;
  }

  /** The text a v1 card is signed over: {@code SHiNE_CARD|login|publicKeyB64|version|s1=url1|s2=url2}. */
  public static String signedText(String login, String publicKeyB64, long version,
      List<Map.Entry<String, String>> routes) {
    StringBuilder text = new StringBuilder("SHiNE_CARD|").append(login).append('|').append(publicKeyB64)
        .append('|').append(version);
    for (Map.Entry<String, String> route : routes) {
      text.append('|').append(route.getKey()).append('=').append(route.getValue());
    }
    return text.toString();
  }

  /** The keys of one login's card; when there are none, {@code problem} says why. */
  public record Keys(String login, List<Ed25519Signer.PublicKey> keys, String problem) {
    public Keys {
      Objects.requireNonNull(login);
      keys = List.copyOf(keys);
    }

    static Keys unusable(String login, String problem) {
      return new Keys(login, List.of(), Objects.requireNonNull(problem));
    }
  }
}
