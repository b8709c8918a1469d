package org.shine.server.dm;

import java.util.Objects;

/**
 * One parsed SHiNE_DM container (PROTOCOL §3). {@code bytes} are the exact wire bytes; the signature covers
 * {@code bytes[0 .. bytes.length - 64)}.
 */
public record DmContainer(
    DmKind kind,
    long createdAtMs,
    long nonce,
    long revision,
    String from,
    String to,
    String ref,
    byte[] body,
    byte[] bytes) {

  public DmContainer {
    Objects.requireNonNull(kind);
    Objects.requireNonNull(from);
    Objects.requireNonNull(to);
    Objects.requireNonNull(ref);
    Objects.requireNonNull(body);
    Objects.requireNonNull(bytes);
  }

  public String baseKey() {
    return DmKeys.baseKey(from, to, createdAtMs, nonce);
  }

  public String messageKey() {
    return DmKeys.messageKey(baseKey(), kind);
  }

  public int signedLength() {
    return bytes.length - Ed25519Signer.SIGNATURE_SIZE;
  }

  /** True when the author's key signs this container's bytes. */
  public boolean verifySignature(byte[] authorPublicKey) {
    return Ed25519Signer.verify(authorPublicKey, bytes, 0, signedLength(), bytes, signedLength());
  }

  /** As {@link #verifySignature(byte[])} with a key decoded once. */
  public boolean verifySignature(Ed25519Signer.PublicKey authorKey) {
    return authorKey.verify(bytes, 0, signedLength(), bytes, signedLength());
  }
}
