package org.shine.server.dm;

import java.security.SecureRandom;
import org.bouncycastle.math.ec.rfc8032.Ed25519;

/** Ed25519 key generation, signing and verification on raw 32-byte keys and 64-byte signatures (BouncyCastle). */
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
    if (publicKey == null || publicKey.length != PUBLIC_KEY_SIZE || signature == null
        || signature.length - sigOffset < SIGNATURE_SIZE) {
      return false;
    }
    return Ed25519.verify(signature, sigOffset, publicKey, 0, message, offset, length);
  }

  public static boolean verify(byte[] publicKey, byte[] message, byte[] signature) {
    return verify(publicKey, message, 0, message.length, signature, 0);
  }

  /** A public key decoded once, for many verifications (skips the point decompression of each). */
  public static PublicKey publicKey(byte[] publicKey) {
    Ed25519.PublicPoint point = publicKey != null && publicKey.length == PUBLIC_KEY_SIZE
        ? Ed25519.validatePublicKeyPartialExport(publicKey, 0) : null;
    return new PublicKey(publicKey == null ? new byte[0] : publicKey.clone(), point);
  }

  private static void requireLength(byte[] bytes, int length, String what) {
    if (bytes == null || bytes.length != length) {
      throw new IllegalArgumentException(what + " must be " + length + " bytes");
    }
  }

  /** A decoded public key; {@code point} is null when the bytes are not a valid key (nothing verifies). */
  public static final class PublicKey {
    private final byte[] encoded;
    private final Ed25519.PublicPoint point;

    private PublicKey(byte[] encoded, Ed25519.PublicPoint point) {
      this.encoded = encoded;
      this.point = point;
    }

    public byte[] encoded() {
      return encoded.clone();
    }

    /** True when the 64-byte signature at {@code sigOffset} signs the message range with this key. */
    public boolean verify(byte[] message, int offset, int length, byte[] signature, int sigOffset) {
      return point != null && signature != null && signature.length - sigOffset >= SIGNATURE_SIZE
          && Ed25519.verify(signature, sigOffset, point, message, offset, length);
    }
  }

  /** A raw Ed25519 key pair. */
  public record KeyPair(byte[] privateKey, byte[] publicKey) {
  }
}
