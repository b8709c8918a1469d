package org.shine.server.client;

import java.util.Base64;
import org.shine.server.dm.BodyCipher;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmKeys;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.KeyFile;

/**
 * Writes the two copies of a text message (PROTOCOL §4 v3, "encrypted bodies"): each copy is sealed exactly when its
 * owner's card has an encryption key — the incoming copy to the recipient's key, the outgoing copy to the sender's
 * own — else it carries the plaintext v1 body. A key is the card's {@code encryptionKeyB64}, null when it has none.
 */
public record MessageSealer(String recipientKeyB64, String ownKeyB64) {
  /** The two bodies of one revision, and the larger of their sizes (what the 64 KiB limit is checked against). */
  public record Bodies(byte[] incoming, byte[] outgoing) {
    public int largest() {
      return Math.max(incoming.length, outgoing.length);
    }

    public boolean fits() {
      return largest() <= DmCodec.DEFAULT_MAX_BODY;
    }
  }

  /** True when the recipient's copy is sealed (the peer's card has an encryption key). */
  public boolean endToEnd() {
    return recipientKeyB64 != null;
  }

  public Bodies bodies(String from, String to, long createdAtMs, long nonce, long revision, String text) {
    byte[] plain = MessageBody.encode(text);
    String baseKey = DmKeys.baseKey(from, to, createdAtMs, nonce);
    return new Bodies(seal(plain, recipientKeyB64, baseKey, DmKind.INCOMING, revision),
        seal(plain, ownKeyB64, baseKey, DmKind.OUTGOING, revision));
  }

  /** Signs both copies with these bodies. */
  public static ShineClient.SignedPair sign(String from, KeyFile key, String to, long createdAtMs, long nonce,
      long revision, Bodies bodies) {
    return ShineClient.signPair(from, key, to, createdAtMs, nonce, revision, bodies.incoming(), bodies.outgoing());
  }

  private static byte[] seal(byte[] plain, String keyB64, String baseKey, DmKind kind, long revision) {
    return keyB64 == null ? plain
        : BodyCipher.sealBody(plain, Base64.getDecoder().decode(keyB64), baseKey, kind, revision);
  }
}
