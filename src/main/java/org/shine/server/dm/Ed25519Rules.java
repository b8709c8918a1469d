package org.shine.server.dm;

import java.util.HexFormat;

/**
 * The byte-level rules every verification applies before any provider is asked, so that the providers are only
 * ever asked about inputs on which they agree (docs/BENCHMARKS.md, "Ed25519 verification"): a key must be a
 * canonical encoding of a point that is not of small order, a signature must have a canonical R and S.
 */
final class Ed25519Rules {
  /** p = 2^255 - 19, little-endian. */
  private static final byte[] P = littleEndian("7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffed");
  /** p - 1, the y of the point of order 2. */
  private static final byte[] P_MINUS_1 =
      littleEndian("7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffec");
  /** The group order L = 2^252 + 27742317777372353535851937790883648493, little-endian. */
  private static final byte[] L = littleEndian("1000000000000000000000000000000014def9dea2f79cd65812631a5cf5d3ed");
  /** The two y-coordinates of the four points of order 8. */
  private static final byte[] ORDER8_Y1 =
      littleEndian("7a03ac9277fdc74ec6cc392cfa53202a0f67100d760b3cba4fd84d3d706a17c7");
  private static final byte[] ORDER8_Y2 =
      littleEndian("05fc536d880238b13933c6d305acdfd5f098eff289f4c345b027b2c28f95e826");

  private Ed25519Rules() {
  }

  /**
   * True when {@code key} is 32 bytes naming, canonically, a point that is not of small order: its y is below
   * p - 1 and is none of 0, 1 and the two y of the order-8 points (the y of the small-order points are 0, 1, p - 1
   * and those two, whatever the sign bit). Whether the point exists is left to the decoder.
   */
  static boolean acceptsKey(byte[] key) {
    return key != null && key.length == Ed25519Signer.PUBLIC_KEY_SIZE
        && compareY(key, 0, P_MINUS_1) < 0
        && !isZeroOrOne(key)
        && compareY(key, 0, ORDER8_Y1) != 0
        && compareY(key, 0, ORDER8_Y2) != 0;
  }

  /** True when 64 bytes start at {@code offset} and hold a canonical R (y below p) and S (below L). */
  static boolean acceptsSignature(byte[] signature, int offset) {
    return signature != null && offset >= 0 && signature.length - offset >= Ed25519Signer.SIGNATURE_SIZE
        && compareY(signature, offset, P) < 0
        && compare(signature, offset + 32, L) < 0;
  }

  private static boolean isZeroOrOne(byte[] key) {
    if ((key[0] & 0xFF) > 1 || (key[31] & 0x7F) != 0) {
      return false;
    }
    for (int i = 1; i < 31; i++) {
      if (key[i] != 0) {
        return false;
      }
    }
    return true;
  }

  /** Compares the y of the point encoded at {@code offset} (sign bit cleared) with {@code limit}. */
  private static int compareY(byte[] bytes, int offset, byte[] limit) {
    int top = Integer.compare(bytes[offset + 31] & 0x7F, limit[31] & 0xFF);
    return top != 0 ? top : compareBelow(bytes, offset, limit, 31);
  }

  /** Compares the 32-byte little-endian integer at {@code offset} with {@code limit}. */
  private static int compare(byte[] bytes, int offset, byte[] limit) {
    return compareBelow(bytes, offset, limit, 32);
  }

  private static int compareBelow(byte[] bytes, int offset, byte[] limit, int length) {
    for (int i = length - 1; i >= 0; i--) {
      int c = Integer.compare(bytes[offset + i] & 0xFF, limit[i] & 0xFF);
      if (c != 0) {
        return c;
      }
    }
    return 0;
  }

  private static byte[] littleEndian(String bigEndianHex) {
    byte[] big = HexFormat.of().parseHex(bigEndianHex);
    byte[] little = new byte[big.length];
    for (int i = 0; i < big.length; i++) {
      little[i] = big[big.length - 1 - i];
    }
    return little;
  }
}
