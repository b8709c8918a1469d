package org.shine.server.client;

import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;
import org.shine.server.dm.BodyCipher;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.Hpke;

/**
 * Reads the body of a message copy as a client shows it (PROTOCOL §4 v3, "Showing"): an encrypted body opened with
 * one of the device's encryption keys (old ones included), one that does not open as "cannot decrypt on this
 * device" (never as text), and a plaintext body from a contact whose card has an encryption key marked "sent
 * unencrypted".
 */
public final class BodyReader {
  /** What is shown in place of a body this device cannot open. */
  public static final String CANNOT_DECRYPT = "cannot decrypt on this device";
  /** The mark of a plaintext body from a contact who could have encrypted it. */
  public static final String SENT_UNENCRYPTED = "sent unencrypted";

  private final String me;
  private final BodyCipher.PrivateKeys keys;
  private final Predicate<String> encrypts;

  /** How a body reads: its text (null when it did not open) and how it came. */
  public record Read(String text, Kind kind) {
    public boolean readable() {
      return text != null;
    }
  }

  /** How a body came. */
  public enum Kind {
    /** Encrypted, opened here. */
    ENCRYPTED,
    /** Encrypted, and none of this device's keys opens it. */
    UNREADABLE,
    /** Plaintext, from someone whose card has no encryption key (or the user's own). */
    PLAIN,
    /** Plaintext from a contact whose card has an encryption key. */
    SENT_UNENCRYPTED
  }

  /**
   * For {@code me} holding {@code keys}; {@code encrypts} says whether a contact's (pinned) card has an encryption
   * key.
   */
  public BodyReader(String me, List<Hpke.KeyPair> keys, Predicate<String> encrypts) {
    this.me = Objects.requireNonNull(me);
    this.keys = BodyCipher.PrivateKeys.of(keys.stream().map(Hpke.KeyPair::privateKey).toList());
    this.encrypts = Objects.requireNonNull(encrypts);
  }

  /** A reader that holds no key and marks nothing (for plain views in tools and tests). */
  public static BodyReader plain(String me) {
    return new BodyReader(me, List.of(), login -> false);
  }

  public Read read(DmContainer copy) {
    byte[] body = copy.body();
    if (BodyCipher.isEncrypted(body)) {
      try {
        return new Read(MessageBody.text(BodyCipher.openBody(body, keys, copy.baseKey(), copy.kind(),
            copy.revision())), Kind.ENCRYPTED);
      } catch (BodyCipher.OpenFailure e) {
        return new Read(null, Kind.UNREADABLE);
      }
    }
    boolean marked = !copy.from().equals(me) && encrypts.test(copy.from());
    return new Read(MessageBody.text(body), marked ? Kind.SENT_UNENCRYPTED : Kind.PLAIN);
  }
}
