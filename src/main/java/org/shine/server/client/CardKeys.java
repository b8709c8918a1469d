package org.shine.server.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.shine.server.dm.Ed25519Signer;

/**
 * The keys a user's card lets sign containers, read from the card JSON a server serves (PROTOCOL §4). A client reads
 * keys from a card here and nowhere else, so that v3 cards (several device keys, rotation) are added in this one
 * place. Today: a v1 card's one {@code publicKeyB64}, once the card names the login asked for and its own signature
 * verifies with that key.
 */
public final class CardKeys {
  private CardKeys() {
  }

  /**
   * The keys of {@code login}'s card, or none with the problem in words a user reads. Verifies the card's signature:
   * CPU work for a worker thread.
   */
  public static Keys of(String login, JsonNode card) {
    Objects.requireNonNull(login);
    if (card == null || !card.isObject() || !login.equals(card.path("login").asText(null))) {
      return Keys.unusable(login, "the card served for " + login + " is not " + login + "'s");
    }
    if (!card.has("publicKeyB64") && card.has("keys")) {
      return Keys.unusable(login, login + "'s card is of a newer format (several keys) this client does not read yet");
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
    List<Map.Entry<String, String>> routes = new ArrayList<>();
    for (JsonNode route : card.get("accessServers")) {
      routes.add(Map.entry(route.path("serverLogin").asText(), route.path("url").asText()));
    }
    byte[] signed = signedText(login, card.get("publicKeyB64").asText(), card.get("version").asLong(), routes)
        .getBytes(StandardCharsets.UTF_8);
    Ed25519Signer.PublicKey key = Ed25519Signer.publicKey(publicKey);
    if (!key.verify(signed, 0, signed.length, signature, 0)) {
      return Keys.unusable(login, login + "'s card is not signed by its key");
    }
    return new Keys(login, List.of(key), null);
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
