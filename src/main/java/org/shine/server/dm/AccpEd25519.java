package org.shine.server.dm;

import java.security.GeneralSecurityException;
import java.security.Provider;
import java.security.PublicKey;
import java.security.Signature;
import java.util.HexFormat;
import java.util.Objects;

/**
 * Amazon Corretto Crypto Provider (AWS-LC, native) first, BouncyCastle for what it rejects. ACCP checks the
 * cofactorless equation R = [S]B - [k]A, which implies BouncyCastle's cofactored one, so its {@code true} stands;
 * its {@code false} is confirmed by {@code fallback}, since a signature whose R has a small-order component, or
 * whose key does, can satisfy the cofactored equation alone. Both paths thus give BouncyCastle's answer, ACCP's
 * at ACCP's speed for every valid signature.
 */
final class AccpEd25519 implements Ed25519Verifier {
  /** ACCP buffers the message for one native call and refuses a message above 1 MiB (it throws). */
  static final int MAX_MESSAGE = 1 << 20;
  /** RFC 8032 §7.1 TEST 1: public key and the signature of the empty message. */
  private static final byte[] KAT_KEY =
      HexFormat.of().parseHex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  private static final byte[] KAT_SIGNATURE = HexFormat.of().parseHex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d9"
      + "74d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");

  private final Provider provider;
  private final Ed25519Verifier fallback;
  /** A Signature is not thread-safe; one per worker thread, re-initialised only when the key object changes. */
  private final ThreadLocal<Signature> signatures;

  AccpEd25519(Provider provider, Ed25519Verifier fallback) {
    this.provider = Objects.requireNonNull(provider);
    this.fallback = Objects.requireNonNull(fallback);
    this.signatures = ThreadLocal.withInitial(this::newSignature);
  }

  @Override
  public String name() {
    return provider.getName() + " " + provider.getVersionStr() + " (" + fallback.name() + " confirms rejections)";
  }

  @Override
  public boolean verify(Ed25519Signer.PublicKey key, byte[] message, int offset, int length, byte[] signature,
      int sigOffset) {
    return accepts(key, message, offset, length, signature, sigOffset)
        || fallback.verify(key, message, offset, length, signature, sigOffset);
  }

  /** ACCP's own answer; an exception (a key it cannot read, an oversized message) counts as a rejection. */
  boolean accepts(Ed25519Signer.PublicKey key, byte[] message, int offset, int length, byte[] signature,
      int sigOffset) {
    PublicKey jcaKey = key.jcaKey();
    if (jcaKey == null || length > MAX_MESSAGE) {
      return false;
    }
    try {
      Signature verifier = signatures.get();
      verifier.initVerify(jcaKey);
      verifier.update(message, offset, length);
      return verifier.verify(signature, sigOffset, Ed25519Signer.SIGNATURE_SIZE);
    } catch (GeneralSecurityException | RuntimeException e) {
      signatures.remove();
      return false;
    }
  }

  /** Fails unless ACCP offers Ed25519, accepts the RFC 8032 vector and rejects it with one bit changed. */
  void checkKnownAnswer() {
    signatures.get();
    Ed25519Signer.PublicKey key = Ed25519Signer.publicKey(KAT_KEY);
    byte[] tampered = KAT_SIGNATURE.clone();
    tampered[0] ^= 1;
    if (!accepts(key, new byte[0], 0, 0, KAT_SIGNATURE, 0) || accepts(key, new byte[0], 0, 0, tampered, 0)) {
      throw new IllegalStateException("wrong answer on the RFC 8032 test vector");
    }
  }

  private Signature newSignature() {
    try {
      return Signature.getInstance("Ed25519", provider);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(provider.getName() + " offers no Ed25519 signature", e);
    }
  }
}
