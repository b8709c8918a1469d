package org.shine.server.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Whether a newer card of a contact follows from the one a client pinned (PROTOCOL §4 v3, "Clients"): each step of
 * the chain a server serves ({@code GetUserCard {login, sinceEpoch, sinceVersion}}) must be signed as the owner's
 * devices sign — within an epoch by a device key of the card before, into the next epoch by its recovery key — and
 * keep every device key of the card before as a key, a retired key or a revoked key. v1 cards are read as epoch 0
 * with their one key.
 */
public final class CardChain {
  private CardChain() {
  }

  /** The place and keys of one card, as far as following is concerned. */
  record Card(String login, long epoch, long version, List<String> deviceKeys, String recoveryKey,
      List<String> retiredKeys, List<String> revokedKeys, String signer) {
    static Card of(JsonNode card) {
      List<String> devices = new ArrayList<>();
      List<String> retired = new ArrayList<>();
      List<String> revoked = new ArrayList<>();
      String signer;
      if (card.has("publicKeyB64")) {
        devices.add(card.get("publicKeyB64").asText());
        signer = card.get("publicKeyB64").asText();
      } else {
        card.path("keys").forEach(key -> devices.add(key.path("publicKeyB64").asText()));
        card.path("retiredKeys").forEach(key -> retired.add(key.path("publicKeyB64").asText()));
        card.path("revokedKeysB64").forEach(key -> revoked.add(key.asText()));
        signer = card.path("signerKeyB64").asText(null);
      }
      String recovery = card.hasNonNull("recoveryKeyB64") ? card.get("recoveryKeyB64").asText() : null;
      return new Card(card.path("login").asText(), card.path("epoch").asLong(0), card.path("version").asLong(),
          devices, recovery, retired, revoked, signer);
    }

    int compareTo(Card other) {
      int byEpoch = Long.compare(epoch, other.epoch);
      return byEpoch != 0 ? byEpoch : Long.compare(version, other.version);
    }
  }

  /**
   * Empty when {@code chain} (oldest first, each card newer than the one before) follows from {@code pinned}, else
   * why not. Every card's own signature is checked too ({@link CardKeys}): CPU work for a worker thread.
   */
  public static Optional<String> problem(JsonNode pinned, List<JsonNode> chain) {
    Objects.requireNonNull(pinned);
    if (chain.isEmpty()) {
      return Optional.of("no card follows");
    }
    JsonNode before = pinned;
    for (JsonNode next : chain) {
      Optional<String> step = stepProblem(before, next);
      if (step.isPresent()) {
        return step;
      }
      before = next;
    }
    return Optional.empty();
  }

  /** Empty when {@code next} follows directly from {@code previous} (or is the same card), else why not. */
  public static Optional<String> stepProblem(JsonNode previous, JsonNode next) {
    Card from = Card.of(previous);
    String login = from.login();
    CardKeys.Keys keys = CardKeys.of(login, next);
    if (keys.problem() != null) {
      return Optional.of(keys.problem());
    }
    Card to = Card.of(next);
    int order = to.compareTo(from);
    if (order == 0) {
      return sameCard(previous, next) ? Optional.empty()
          : Optional.of("two different cards of " + login + " at epoch " + to.epoch() + " version " + to.version());
    }
    if (order < 0) {
      return Optional.of("the card of " + login + " is older than the one before it");
    }
    if (to.epoch() == from.epoch()) {
      if (!from.deviceKeys().contains(to.signer())) {
        return Optional.of("version " + to.version() + " of " + login + "'s card is not signed by a device key of"
            + " version " + from.version());
      }
    } else if (to.epoch() == from.epoch() + 1) {
      if (from.recoveryKey() == null || !from.recoveryKey().equals(to.signer())) {
        return Optional.of("epoch " + to.epoch() + " of " + login + "'s card is not signed by the recovery key of"
            + " epoch " + from.epoch());
      }
    } else {
      return Optional.of(login + "'s card skips from epoch " + from.epoch() + " to " + to.epoch());
    }
    for (String key : from.deviceKeys()) {
      if (!to.deviceKeys().contains(key) && !to.retiredKeys().contains(key) && !to.revokedKeys().contains(key)) {
        return Optional.of(login + "'s card dropped a device key without retiring or revoking it");
      }
    }
    for (String key : from.revokedKeys()) {
      if (to.deviceKeys().contains(key)) {
        return Optional.of(login + "'s card makes a revoked key current again");
      }
    }
    return Optional.empty();
  }

  /** The same card: same place and the same signature (labels aside, which are not signed). */
  public static boolean sameCard(JsonNode a, JsonNode b) {
    Card one = Card.of(a);
    Card two = Card.of(b);
    return one.compareTo(two) == 0 && a.path("signatureB64").asText().equals(b.path("signatureB64").asText());
  }

  /** True when {@code candidate} is placed after {@code pinned} (a higher epoch, or the same with a higher version). */
  public static boolean isNewer(JsonNode candidate, JsonNode pinned) {
    return Card.of(candidate).compareTo(Card.of(pinned)) > 0;
  }
}
