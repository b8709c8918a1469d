package org.shine.server.dm;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The keys a user's signatures are checked against (PROTOCOL §4 v3): the card's current device keys, the keys it
 * retired (each with the moment it was retired) and the keys it revoked, the last two including every retirement and
 * revocation the server has seen for the login, whatever later cards list. A v1 card is a ring of one current key.
 * Checks are CPU work: callers run them on the worker pool.
 */
public final class KeyRing {
  private final List<Key> current;
  private final List<Key> retired;
  private final List<Key> revoked;

  private KeyRing(List<Key> current, List<Key> retired, List<Key> revoked) {
    this.current = List.copyOf(current);
    this.retired = List.copyOf(retired);
    this.revoked = List.copyOf(revoked);
  }

  /** A ring of one current key (a v1 card). */
  public static KeyRing single(byte[] publicKey) {
    return new KeyRing(List.of(Key.of(publicKey, 0)), List.of(), List.of());
  }

  /**
   * A ring of the current keys (base64, card order), the retired keys (base64 → retiredAtMs) and the revoked ones;
   * a key listed as revoked is only revoked, one listed as retired is not also current.
   */
  public static KeyRing of(List<String> currentB64, Map<String, Long> retiredB64, Collection<String> revokedB64) {
    List<Key> current = new ArrayList<>();
    List<Key> retired = new ArrayList<>();
    List<Key> revoked = new ArrayList<>();
    for (String key : revokedB64) {
      revoked.add(Key.of(decode(key), 0));
    }
    retiredB64.forEach((key, at) -> {
      if (!revokedB64.contains(key)) {
        retired.add(Key.of(decode(key), at));
      }
    });
    for (String key : currentB64) {
      if (!revokedB64.contains(key) && !retiredB64.containsKey(key)) {
        current.add(Key.of(decode(key), 0));
      }
    }
    return new KeyRing(current, retired, revoked);
  }

  /** The current keys, raw. */
  public List<byte[]> currentKeys() {
    return current.stream().map(key -> key.raw.clone()).toList();
  }

  /** Whether {@code publicKey} is one of the current keys. */
  public boolean isCurrent(byte[] publicKey) {
    return indexOf(current, publicKey) >= 0;
  }

  /** Whether {@code publicKey} was revoked. */
  public boolean isRevoked(byte[] publicKey) {
    return indexOf(revoked, publicKey) >= 0;
  }

  /**
   * The current key that made {@code signature} over {@code message} (raw), or null: what a login proves. With
   * {@code only} (a device the client named) just that key is tried, and only when it is current.
   */
  public byte[] currentSigner(byte[] message, byte[] signature, byte[] only) {
    for (Key key : current) {
      if ((only == null || Arrays.equals(only, key.raw))
          && key.verifier.verify(message, 0, message.length, signature, 0)) {
        return key.raw.clone();
      }
    }
    return null;
  }

  /** How the key that signed {@code container} stands, trying current keys first; NONE when no key of the ring did. */
  public Match match(DmContainer container) {
    for (Key key : current) {
      if (container.verifySignature(key.verifier)) {
        return Match.CURRENT;
      }
    }
    for (Key key : retired) {
      if (container.verifySignature(key.verifier)) {
        return new Match(Standing.RETIRED, key.retiredAtMs);
      }
    }
    for (Key key : revoked) {
      if (container.verifySignature(key.verifier)) {
        return Match.REVOKED;
      }
    }
    return Match.NONE;
  }

  private static int indexOf(List<Key> keys, byte[] publicKey) {
    for (int i = 0; i < keys.size(); i++) {
      if (Arrays.equals(keys.get(i).raw, publicKey)) {
        return i;
      }
    }
    return -1;
  }

  private static byte[] decode(String keyB64) {
    return Base64.getDecoder().decode(Objects.requireNonNull(keyB64));
  }

  /** Where the key that made a signature stands in the ring. */
  public enum Standing { CURRENT, RETIRED, REVOKED, NONE }

  /** The standing of a signature's key; {@code retiredAtMs} for a retired one. */
  public record Match(Standing standing, long retiredAtMs) {
    public static final Match CURRENT = new Match(Standing.CURRENT, 0);
    public static final Match REVOKED = new Match(Standing.REVOKED, 0);
    public static final Match NONE = new Match(Standing.NONE, 0);

    /** The weaker of two matches (several containers of one request stand as their weakest signature). */
    public Match weaker(Match other) {
      if (other.standing.ordinal() != standing.ordinal()) {
        return other.standing.ordinal() > standing.ordinal() ? other : this;
      }
      return standing == Standing.RETIRED && other.retiredAtMs < retiredAtMs ? other : this;
    }
  }

  private record Key(byte[] raw, Ed25519Signer.PublicKey verifier, long retiredAtMs) {
    static Key of(byte[] raw, long retiredAtMs) {
      return new Key(raw.clone(), Ed25519Signer.publicKey(raw), retiredAtMs);
    }
  }
}
