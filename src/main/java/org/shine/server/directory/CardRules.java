package org.shine.server.directory;

import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.shine.server.model.KeyHistoryEntry;
import org.shine.server.model.UserCard;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;

/**
 * Whether a card whose signature verifies with its {@code signerKeyB64} may follow the stored one (PROTOCOL §4 v3):
 * its order, its signer, and where the stored card's keys went. Pure: the caller verified the signature, holds the
 * login's lock, and passes the key history it keeps for the login.
 *
 * <p>Order is (epoch, version). Within an epoch a current device key of the stored card signs a higher version; the
 * stored card's recovery key signs the next epoch, at any version. Only the recovery key changes or removes the
 * recovery key (a device key may add one when there is none). Every current key of the stored card is in the new card
 * as a key, retired or revoked; a retired key stays retired (with the same moment) or is revoked, or is left out
 * once its window has passed; nothing retired or revoked is made current again. A login new here takes a card signed
 * by one of its own device keys or its recovery key (trust on first use, as for v1).
 */
final class CardRules {
  private final long nowMs;
  private final long skewMs;
  private final long retiredWindowMs;

  /**
   * @param retiredWindowMs how long after its retirement a retired key may still sign a message in its retry window
   *     (the last point of the delivery schedule plus the clock skew); after that a card may leave it out
   */
  CardRules(long nowMs, long skewMs, long retiredWindowMs) {
    this.nowMs = nowMs;
    this.skewMs = skewMs;
    this.retiredWindowMs = retiredWindowMs;
  }

  /** What the card does to the stored one. */
  enum Verdict {
    /** The same card (same epoch, version and signed text): nothing changes. */
    UNCHANGED,
    /** A newer card that follows from the stored one (or the first card of the login). */
    ACCEPT,
    /** The signer cannot be placed from what is stored: versions were missed; fetch the chain, then try again. */
    GAP
  }

  /**
   * Judges {@code card} against {@code stored} (null for a login new here) and the login's {@code history} (every
   * retirement and revocation seen, by key); throws the refusal as a {@link ProtocolException}.
   */
  Verdict judge(UserCard stored, Map<String, KeyHistoryEntry> history, UserCard card) {
    checkRetiredMoments(card);
    if (stored == null) {
      if (!card.deviceKeysB64().contains(card.signerKeyB64())
          && !card.signerKeyB64().equals(card.recoveryKeyB64())) {
        return Verdict.GAP;
      }
      checkHistory(history, card);
      return Verdict.ACCEPT;
    }
    boolean knownSigner = stored.deviceKeysB64().contains(card.signerKeyB64())
        || card.signerKeyB64().equals(stored.recoveryKeyB64()) || history.containsKey(card.signerKeyB64())
        || stored.retiredKeys().stream().anyMatch(key -> key.publicKeyB64().equals(card.signerKeyB64()));
    if (!card.v3() && !knownSigner) {
      // a v1 card cannot follow a chain: another key is what v1 always answered
      throw new ProtocolException(Status.CONFLICT, ErrorCode.KEY_MISMATCH, "login " + card.login()
          + " is registered with another key");
    }
    if (!card.after(stored.epoch(), stored.version())) {
      if (card.epoch() == stored.epoch() && card.version() == stored.version()) {
        if (Arrays.equals(card.signedBytes(), stored.signedBytes())) {
          return Verdict.UNCHANGED;
        }
        throw new ProtocolException(Status.CONFLICT, ErrorCode.CARD_CONFLICT, "a different card with epoch "
            + card.epoch() + " and version " + card.version() + " is already stored");
      }
      throw new ProtocolException(Status.CONFLICT, ErrorCode.STALE_VERSION, "card epoch " + card.epoch()
          + " version " + card.version() + " is older than the stored epoch " + stored.epoch() + " version "
          + stored.version());
    }
    String signer = card.signerKeyB64();
    KeyHistoryEntry signerHistory = history.get(signer);
    if (stored.revokedKeysB64().contains(signer) || (signerHistory != null && signerHistory.revoked())) {
      throw keyRevoked("the card's signer " + signer + " was revoked");
    }
    boolean storedDevice = stored.deviceKeysB64().contains(signer);
    boolean storedRecovery = signer.equals(stored.recoveryKeyB64());
    if (card.epoch() == stored.epoch()) {
      if (storedRecovery) {
        throw new ProtocolException(Status.FORBIDDEN, ErrorCode.SIGNER_NOT_ALLOWED, "the recovery key signs the"
            + " next epoch (" + (stored.epoch() + 1) + "), not another version of epoch " + stored.epoch());
      }
      if (!storedDevice) {
        return unplaced(stored, signerHistory, card);
      }
    } else if (card.epoch() == stored.epoch() + 1) {
      if (storedDevice) {
        throw recoveryRequired("a new epoch (" + card.epoch() + ") is signed by the recovery key, not a device key");
      }
      if (!storedRecovery) {
        return unplaced(stored, signerHistory, card);
      }
    } else {
      return unplaced(stored, signerHistory, card);
    }
    if (!Objects.equals(card.recoveryKeyB64(), stored.recoveryKeyB64()) && stored.recoveryKeyB64() != null
        && !storedRecovery) {
      throw recoveryRequired("only the recovery key changes or removes the recovery key");
    }
    checkKeptKeys(stored, card);
    checkHistory(history, card);
    return Verdict.ACCEPT;
  }

  /** A signer the stored card does not know: a retired key may sign no card; anything else means missed versions. */
  private static Verdict unplaced(UserCard stored, KeyHistoryEntry signerHistory, UserCard card) {
    boolean retired = signerHistory != null
        || stored.retiredKeys().stream().anyMatch(key -> key.publicKeyB64().equals(card.signerKeyB64()));
    if (retired) {
      throw new ProtocolException(Status.FORBIDDEN, ErrorCode.SIGNER_NOT_ALLOWED, "the card's signer "
          + card.signerKeyB64() + " was retired: a retired key signs no card");
    }
    return Verdict.GAP;
  }

  /** Every key of the stored card is in the new one: current, retired, or revoked (a retired one may expire). */
  private void checkKeptKeys(UserCard stored, UserCard card) {
    Set<String> listed = new HashSet<>(card.deviceKeysB64());
    Map<String, Long> retired = retiredOf(card);
    listed.addAll(retired.keySet());
    listed.addAll(card.revokedKeysB64());
    for (String key : stored.deviceKeysB64()) {
      if (!listed.contains(key)) {
        throw dropped(key);
      }
    }
    for (UserCard.RetiredKey key : stored.retiredKeys()) {
      if (card.deviceKeysB64().contains(key.publicKeyB64()) || key.publicKeyB64().equals(card.recoveryKeyB64())) {
        throw invalid("key " + key.publicKeyB64() + " was retired: it is never current again");
      }
      Long at = retired.get(key.publicKeyB64());
      if (at != null && at != key.retiredAtMs()) {
        throw invalid("key " + key.publicKeyB64() + " was retired at " + key.retiredAtMs() + ": retiredAtMs never"
            + " changes");
      }
      if (at == null && !card.revokedKeysB64().contains(key.publicKeyB64())
          && nowMs <= key.retiredAtMs() + retiredWindowMs) {
        throw dropped(key.publicKeyB64());
      }
    }
  }

  /** What the server has seen stays: no revoked or retired key current again, no retirement moved. */
  private static void checkHistory(Map<String, KeyHistoryEntry> history, UserCard card) {
    for (String key : card.deviceKeysB64()) {
      KeyHistoryEntry seen = history.get(key);
      if (seen != null) {
        throw seen.revoked() ? keyRevoked("key " + key + " was revoked: it is never current again")
            : invalid("key " + key + " was retired: it is never current again");
      }
    }
    if (card.recoveryKeyB64() != null && history.containsKey(card.recoveryKeyB64())) {
      throw invalid("key " + card.recoveryKeyB64() + " was retired or revoked: it cannot be the recovery key");
    }
    for (UserCard.RetiredKey key : card.retiredKeys()) {
      KeyHistoryEntry seen = history.get(key.publicKeyB64());
      if (seen != null && seen.revoked()) {
        throw keyRevoked("key " + key.publicKeyB64() + " was revoked: it cannot be listed as retired");
      }
      if (seen != null && seen.retiredAtMs() != null && seen.retiredAtMs() != key.retiredAtMs()) {
        throw invalid("key " + key.publicKeyB64() + " was retired at " + seen.retiredAtMs() + ": retiredAtMs never"
            + " changes");
      }
    }
  }

  private void checkRetiredMoments(UserCard card) {
    for (UserCard.RetiredKey key : card.retiredKeys()) {
      if (key.retiredAtMs() > nowMs + skewMs) {
        throw invalid("key " + key.publicKeyB64() + " is retired in the future (retiredAtMs " + key.retiredAtMs()
            + ")");
      }
    }
  }

  private static Map<String, Long> retiredOf(UserCard card) {
    Map<String, Long> retired = new HashMap<>();
    card.retiredKeys().forEach(key -> retired.put(key.publicKeyB64(), key.retiredAtMs()));
    return retired;
  }

  private static ProtocolException dropped(String key) {
    return ProtocolException.badRequest(ErrorCode.KEY_DROPPED, "the card leaves out key " + key + " of the stored"
        + " card: list it as a key, in retiredKeys (a rotation) or in revokedKeysB64 (a compromise)");
  }

  private static ProtocolException keyRevoked(String message) {
    return ProtocolException.badRequest(ErrorCode.KEY_REVOKED, message);
  }

  private static ProtocolException recoveryRequired(String message) {
    return new ProtocolException(Status.FORBIDDEN, ErrorCode.RECOVERY_KEY_REQUIRED, message);
  }

  private static ProtocolException invalid(String message) {
    return ProtocolException.badRequest(ErrorCode.INVALID_FIELD, message);
  }
}
