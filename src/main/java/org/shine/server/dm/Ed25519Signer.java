package org.shine.server.dm;

import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.SecureRandom;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Optional;
import org.bouncycastle.math.ec.rfc8032.Ed25519;

/**
 * Ed25519 key generation and signing (BouncyCastle) and verification (ACCP or BouncyCastle, see
 * {@link Ed25519Verifiers}) on raw 32-byte keys and 64-byte signatures.
 */
public final class Ed25519Signer {
  public static final int PUBLIC_KEY_SIZE = Ed25519.PUBLIC_KEY_SIZE;
  public static final int PRIVATE_KEY_SIZE = Ed25519.SECRET_KEY_SIZE;
  public static final int SIGNATURE_SIZE = Ed25519.SIGNATURE_SIZE;
  private static final SecureRandom RANDOM = new SecureRandom();

  static {
    Ed25519.precompute();
  }

  private Ed25519Signer() {
  }

  /** A fresh key pair. */
  public static KeyPair generate() {
    byte[] privateKey = new byte[PRIVATE_KEY_SIZE];
    Ed25519.generatePrivateKey(RANDOM, privateKey);
    return new KeyPair(privateKey, publicKeyOf(privateKey));
  }

  public static byte[] publicKeyOf(byte[] privateKey) {
    requireLength(privateKey, PRIVATE_KEY_SIZE, "private key");
    byte[] publicKey = new byte[PUBLIC_KEY_SIZE];
    Ed25519.generatePublicKey(privateKey, 0, publicKey, 0);
    return publicKey;
  }

  public static byte[] sign(byte[] privateKey, byte[] message, int offset, int length) {
    requireLength(privateKey, PRIVATE_KEY_SIZE, "private key");
    byte[] signature = new byte[SIGNATURE_SIZE];
    Ed25519.sign(privateKey, 0, message, offset, length, signature, 0);
    return signature;
  }

  public static byte[] sign(byte[] privateKey, byte[] message) {
    return sign(privateKey, message, 0, message.length);
  }

  /** True when {@code signature} (64 bytes at {@code sigOffset}) signs the message range with {@code publicKey}. */
  public static boolean verify(byte[] publicKey, byte[] message, int offset, int length, byte[] signature, int sigOffset) {
    return publicKey(publicKey).verify(message, offset, length, signature, sigOffset);
  }

  public static boolean verify(byte[] publicKey, byte[] message, byte[] signature) {
    return verify(publicKey, message, 0, message == null ? 0 : message.length, signature, 0);
  }

  /**
   * A public key decoded once, for many verifications. Decoding is deferred to the first verification, which runs
   * on the worker pool, and kept.
   */
  public static PublicKey publicKey(byte[] publicKey) {
    return new PublicKey(publicKey == null ? new byte[0] : publicKey.clone());
  }

  private static void requireLength(byte[] bytes, int length, String what) {
    if (bytes == null || bytes.length != length) {
      throw new IllegalArgumentException(what + " must be " + length + " bytes");
    }
  }

  /**
   * A public key as the verifiers need it. Nothing verifies with a key that {@link Ed25519Rules} rejects (wrong
   * length, non-canonical, small order) or that names no point.
   */
  public static final class PublicKey {
    private static final byte[] X509_PREFIX = HexFormat.of().parseHex("302a300506032b6570032100");
    private final byte[] encoded;
    private final boolean acceptable;
    // decoded on first use; a race decodes twice to equal values, which is harmless
    private volatile Optional<Ed25519.PublicPoint> point;
    private volatile Optional<java.security.PublicKey> jcaKey;

    private PublicKey(byte[] encoded) {
      this.encoded = encoded;
      this.acceptable = Ed25519Rules.acceptsKey(encoded);
    }

    public byte[] encoded() {
      return encoded.clone();
    }

    /** True when the 64-byte signature at {@code sigOffset} signs the message range with this key. */
    public boolean verify(byte[] message, int offset, int length, byte[] signature, int sigOffset) {
      return verify(Ed25519Verifiers.active(), message, offset, length, signature, sigOffset);
    }

    /** As {@link #verify(byte[], int, int, byte[], int)} by the given verifier (tests run every one). */
    boolean verify(Ed25519Verifier verifier, byte[] message, int offset, int length, byte[] signature, int sigOffset) {
      return acceptable && Ed25519Rules.acceptsSignature(signature, sigOffset) && message != null && offset >= 0
          && length >= 0 && offset <= message.length - length
          && verifier.verify(this, message, offset, length, signature, sigOffset);
    }

    /** BouncyCastle's decoded point, or null when the key is not acceptable or names no point. */
    Ed25519.PublicPoint point() {
      Optional<Ed25519.PublicPoint> decoded = point;
      if (decoded == null) {
        decoded = Optional.ofNullable(acceptable ? Ed25519.validatePublicKeyPartialExport(encoded, 0) : null);
        point = decoded;
      }
      return decoded.orElse(null);
    }

    /** The key as a JCA key (X.509 SubjectPublicKeyInfo read by the JDK), or null when it cannot be one. */
    java.security.PublicKey jcaKey() {
      Optional<java.security.PublicKey> decoded = jcaKey;
      if (decoded == null) {
        decoded = Optional.ofNullable(acceptable ? toJcaKey(encoded) : null);
        jcaKey = decoded;
      }
      return decoded.orElse(null);
    }

    private static java.security.PublicKey toJcaKey(byte[] raw) {
      byte[] spki = Arrays.copyOf(X509_PREFIX, X509_PREFIX.length + raw.length);
      System.arraycopy(raw, 0, spki, X509_PREFIX.length, raw.length);
      try {
        return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(spki));
      } catch (GeneralSecurityException e) {
        return null;
      }
    }
  }

  /** A raw Ed25519 key pair. */
  public record KeyPair(byte[] privateKey, byte[] publicKey) {
  }
}
