package org.shine.server.dm;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Objects;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.bouncycastle.math.ec.rfc7748.X25519;

/**
 * HPKE (RFC 9180) in base mode for the one suite the project uses: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256,
 * AES-128-GCM. Written out from the RFC's pseudocode (§4, §4.1, §5.1, §5.2, §7.1.3) so that it reads next to the
 * browser's {@code shine-web/hpke.js}, which does the same steps with WebCrypto; both reproduce the RFC's Appendix
 * A.1.1 vectors. X25519 comes from BouncyCastle on raw 32-byte keys, HMAC-SHA256 and AES-GCM from the JDK.
 * Pure functions: no state, safe on any thread.
 */
public final class Hpke {
  public static final int PUBLIC_KEY_SIZE = 32;
  public static final int PRIVATE_KEY_SIZE = 32;
  /** The size of {@link Sealed#enc()}: the ephemeral X25519 public key. */
  public static final int ENC_SIZE = 32;
  /** What AES-GCM adds to a plaintext: its tag. */
  public static final int TAG_SIZE = 16;

  private static final int HASH_SIZE = 32;
  private static final int KEY_SIZE = 16;
  private static final int NONCE_SIZE = 12;
  private static final byte MODE_BASE = 0x00;
  private static final byte[] VERSION_LABEL = ascii("HPKE-v1");
  private static final byte[] KEM_SUITE = concat(ascii("KEM"), new byte[] {0x00, 0x20});
  private static final byte[] HPKE_SUITE = concat(ascii("HPKE"), new byte[] {0x00, 0x20, 0x00, 0x01, 0x00, 0x01});
  private static final SecureRandom RANDOM = new SecureRandom();

  private Hpke() {
  }

  /** An X25519 key pair, raw 32 bytes each. */
  public record KeyPair(byte[] privateKey, byte[] publicKey) {
    public KeyPair {
      requireLength(privateKey, PRIVATE_KEY_SIZE, "X25519 private key");
      requireLength(publicKey, PUBLIC_KEY_SIZE, "X25519 public key");
    }
  }

  /** What a single-shot seal hands over: the encapsulated key and the ciphertext (with its tag). */
  public record Sealed(byte[] enc, byte[] ciphertext) {
    public Sealed {
      Objects.requireNonNull(enc);
      Objects.requireNonNull(ciphertext);
    }
  }

  /** A fresh random X25519 key pair. */
  public static KeyPair generateKeyPair() {
    byte[] privateKey = new byte[PRIVATE_KEY_SIZE];
    X25519.generatePrivateKey(RANDOM, privateKey);
    return new KeyPair(privateKey, publicKeyOf(privateKey));
  }

  public static byte[] publicKeyOf(byte[] privateKey) {
    requireLength(privateKey, PRIVATE_KEY_SIZE, "X25519 private key");
    byte[] publicKey = new byte[PUBLIC_KEY_SIZE];
    X25519.generatePublicKey(privateKey, 0, publicKey, 0);
    return publicKey;
  }

  /** RFC 9180 §7.1.3 DeriveKeyPair: the key pair a seed of input keying material stands for (the RFC's vectors). */
  static KeyPair deriveKeyPair(byte[] ikm) {
    byte[] prk = labeledExtract(KEM_SUITE, new byte[0], "dkp_prk", ikm);
    byte[] privateKey = labeledExpand(KEM_SUITE, prk, "sk", new byte[0], PRIVATE_KEY_SIZE);
    return new KeyPair(privateKey, publicKeyOf(privateKey));
  }

  /**
   * Encrypts {@code plaintext} to {@code recipientPublicKey} with a fresh ephemeral key (SealBase, sequence number 0).
   *
   * @throws IllegalArgumentException when the recipient key is not 32 bytes or is a point of small order (the DH
   *     result would be zero, RFC 9180 §7.1.4)
   */
  public static Sealed seal(byte[] recipientPublicKey, byte[] info, byte[] aad, byte[] plaintext) {
    return seal(recipientPublicKey, info, aad, plaintext, generateKeyPair());
  }

  /** {@link #seal} with a given ephemeral key pair: deterministic, for test vectors only. */
  static Sealed seal(byte[] recipientPublicKey, byte[] info, byte[] aad, byte[] plaintext, KeyPair ephemeral) {
    Encapsulation encapsulation = encap(recipientPublicKey, ephemeral);
    Context context = keySchedule(encapsulation.sharedSecret(), info);
    return new Sealed(encapsulation.enc(), context.seal(0, aad, plaintext));
  }

  /**
   * Decrypts what {@link #seal} made for the key pair of {@code recipientPrivateKey} (OpenBase, sequence number 0).
   *
   * @throws HpkeOpenException when {@code enc} is no usable X25519 public key or the ciphertext does not
   *     authenticate under this key, {@code info} and {@code aad}
   */
  public static byte[] open(byte[] enc, byte[] recipientPrivateKey, byte[] info, byte[] aad, byte[] ciphertext)
      throws HpkeOpenException {
    byte[] sharedSecret = decap(enc, recipientPrivateKey);
    return keySchedule(sharedSecret, info).open(0, aad, ciphertext);
  }

  /** The KEM's output: the shared secret and its encapsulation (the ephemeral public key). */
  record Encapsulation(byte[] sharedSecret, byte[] enc) {
  }

  /** RFC 9180 §4.1 Encap with a given ephemeral key pair. */
  static Encapsulation encap(byte[] recipientPublicKey, KeyPair ephemeral) {
    requireLength(recipientPublicKey, PUBLIC_KEY_SIZE, "X25519 public key");
    byte[] dh = dh(ephemeral.privateKey(), recipientPublicKey);
    if (dh == null) {
      throw new IllegalArgumentException("the recipient's X25519 public key is a point of small order");
    }
    byte[] enc = ephemeral.publicKey().clone();
    return new Encapsulation(extractAndExpand(dh, concat(enc, recipientPublicKey)), enc);
  }

  /** RFC 9180 §4.1 Decap. */
  static byte[] decap(byte[] enc, byte[] recipientPrivateKey) throws HpkeOpenException {
    requireLength(recipientPrivateKey, PRIVATE_KEY_SIZE, "X25519 private key");
    if (enc == null || enc.length != ENC_SIZE) {
      throw new HpkeOpenException("the encapsulated key is not " + ENC_SIZE + " bytes");
    }
    byte[] dh = dh(recipientPrivateKey, enc);
    if (dh == null) {
      throw new HpkeOpenException("the encapsulated key is a point of small order");
    }
    return extractAndExpand(dh, concat(enc, publicKeyOf(recipientPrivateKey)));
  }

  /** RFC 9180 §5.1 KeySchedule in base mode (no PSK). */
  static Context keySchedule(byte[] sharedSecret, byte[] info) {
    byte[] pskIdHash = labeledExtract(HPKE_SUITE, new byte[0], "psk_id_hash", new byte[0]);
    byte[] infoHash = labeledExtract(HPKE_SUITE, new byte[0], "info_hash", info);
    byte[] context = concat(new byte[] {MODE_BASE}, pskIdHash, infoHash);
    byte[] secret = labeledExtract(HPKE_SUITE, sharedSecret, "secret", new byte[0]);
    return new Context(
        labeledExpand(HPKE_SUITE, secret, "key", context, KEY_SIZE),
        labeledExpand(HPKE_SUITE, secret, "base_nonce", context, NONCE_SIZE),
        labeledExpand(HPKE_SUITE, secret, "exp", context, HASH_SIZE));
  }

  /**
   * An encryption context (RFC 9180 §5.2). The sequence number is the caller's: the product only ever uses 0 (one
   * message per context), the RFC's vectors list others. Reusing a sequence number with another plaintext would
   * reuse a nonce, so nothing outside this package gets a context.
   */
  record Context(byte[] key, byte[] baseNonce, byte[] exporterSecret) {

    byte[] seal(long sequence, byte[] aad, byte[] plaintext) {
      try {
        return aesGcm(Cipher.ENCRYPT_MODE, sequence, aad).doFinal(plaintext);
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("AES-GCM failed to encrypt", e);
      }
    }

    byte[] open(long sequence, byte[] aad, byte[] ciphertext) throws HpkeOpenException {
      if (ciphertext == null || ciphertext.length < TAG_SIZE) {
        throw new HpkeOpenException("the ciphertext is shorter than its " + TAG_SIZE + "-byte tag");
      }
      try {
        return aesGcm(Cipher.DECRYPT_MODE, sequence, aad).doFinal(ciphertext);
      } catch (AEADBadTagException e) {
        throw new HpkeOpenException("the ciphertext does not authenticate (wrong key, info or aad, or altered)");
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("AES-GCM failed to decrypt", e);
      }
    }

    /** RFC 9180 §5.2 ComputeNonce: the base nonce XOR the sequence number, big-endian. */
    byte[] nonce(long sequence) {
      byte[] nonce = baseNonce.clone();
      for (int i = 0; i < Long.BYTES; i++) {
        nonce[NONCE_SIZE - 1 - i] ^= (byte) (sequence >>> (8 * i));
      }
      return nonce;
    }

    /** RFC 9180 §5.3 Export. */
    byte[] export(byte[] exporterContext, int length) {
      return labeledExpand(HPKE_SUITE, exporterSecret, "sec", exporterContext, length);
    }

    private Cipher aesGcm(int mode, long sequence, byte[] aad) throws GeneralSecurityException {
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(mode, new SecretKeySpec(key, "AES"), new GCMParameterSpec(TAG_SIZE * 8, nonce(sequence)));
      cipher.updateAAD(aad);
      return cipher;
    }
  }

  private static byte[] dh(byte[] privateKey, byte[] publicKey) {
    byte[] shared = new byte[32];
    return X25519.calculateAgreement(privateKey, 0, publicKey, 0, shared, 0) ? shared : null;
  }

  /** RFC 9180 §4.1 ExtractAndExpand. */
  private static byte[] extractAndExpand(byte[] dh, byte[] kemContext) {
    byte[] prk = labeledExtract(KEM_SUITE, new byte[0], "eae_prk", dh);
    return labeledExpand(KEM_SUITE, prk, "shared_secret", kemContext, HASH_SIZE);
  }

  /** RFC 9180 §4 LabeledExtract. */
  private static byte[] labeledExtract(byte[] suite, byte[] salt, String label, byte[] ikm) {
    return extract(salt, concat(VERSION_LABEL, suite, ascii(label), ikm));
  }

  /** RFC 9180 §4 LabeledExpand. */
  private static byte[] labeledExpand(byte[] suite, byte[] prk, String label, byte[] info, int length) {
    byte[] prefix = {(byte) (length >>> 8), (byte) length};
    return expand(prk, concat(prefix, VERSION_LABEL, suite, ascii(label), info), length);
  }

  /** RFC 5869 HKDF-Extract; an empty salt is HashLen zeros (which the JDK's HMAC accepts as a key). */
  private static byte[] extract(byte[] salt, byte[] ikm) {
    Mac mac = hmac(salt.length == 0 ? new byte[HASH_SIZE] : salt);
    return mac.doFinal(ikm);
  }

  /** RFC 5869 HKDF-Expand. */
  private static byte[] expand(byte[] prk, byte[] info, int length) {
    if (length > 255 * HASH_SIZE) {
      throw new IllegalArgumentException("HKDF-Expand cannot make " + length + " bytes");
    }
    Mac mac = hmac(prk);
    ByteArrayOutputStream out = new ByteArrayOutputStream(length + HASH_SIZE);
    byte[] block = new byte[0];
    for (int counter = 1; out.size() < length; counter++) {
      mac.update(block);
      mac.update(info);
      mac.update((byte) counter);
      block = mac.doFinal();
      out.writeBytes(block);
    }
    return Arrays.copyOf(out.toByteArray(), length);
  }

  private static Mac hmac(byte[] key) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      return mac;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is missing from this JDK", e);
    }
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] part : parts) {
      out.writeBytes(part);
    }
    return out.toByteArray();
  }

  private static byte[] ascii(String text) {
    return text.getBytes(StandardCharsets.US_ASCII);
  }

  private static void requireLength(byte[] bytes, int length, String what) {
    if (bytes == null || bytes.length != length) {
      throw new IllegalArgumentException(what + " must be " + length + " bytes");
    }
  }
}
