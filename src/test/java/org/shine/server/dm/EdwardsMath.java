package org.shine.server.dm;

import java.math.BigInteger;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Slow, plain edwards25519 arithmetic (RFC 8032 §5.1) on BigIntegers, independent of every provider under test, for
 * building the inputs that no honest signer makes: small-order and mixed-order points, non-canonical encodings, and
 * signatures that only a cofactored (or only a cofactorless) verifier accepts.
 */
final class EdwardsMath {
  static final BigInteger P = BigInteger.TWO.pow(255).subtract(BigInteger.valueOf(19));
  static final BigInteger L = BigInteger.TWO.pow(252).add(new BigInteger("27742317777372353535851937790883648493"));
  static final BigInteger D = BigInteger.valueOf(-121665).multiply(BigInteger.valueOf(121666).modInverse(P)).mod(P);
  private static final BigInteger TWO_D = D.shiftLeft(1).mod(P);
  private static final BigInteger SQRT_M1 = BigInteger.TWO.modPow(P.subtract(BigInteger.ONE).shiftRight(2), P);
  static final Point IDENTITY = new Point(BigInteger.ZERO, BigInteger.ONE);
  static final Point BASE = decode(hex("5866666666666666666666666666666666666666666666666666666666666666"), false);
  private static final List<Point> TORSION = findTorsion();

  private EdwardsMath() {
  }

  /** An affine point; every point built here is on the curve. */
  record Point(BigInteger x, BigInteger y) {
    Point add(Point q) {
      BigInteger dxxyy = D.multiply(x).multiply(q.x).multiply(y).multiply(q.y).mod(P);
      BigInteger x3 = x.multiply(q.y).add(y.multiply(q.x)).multiply(BigInteger.ONE.add(dxxyy).modInverse(P));
      BigInteger y3 = y.multiply(q.y).add(x.multiply(q.x)).multiply(BigInteger.ONE.subtract(dxxyy).mod(P).modInverse(P));
      return new Point(x3.mod(P), y3.mod(P));
    }

    Point negate() {
      return new Point(x.negate().mod(P), y);
    }

    /** [n]P, in extended coordinates (one inversion at the end). */
    Point times(BigInteger n) {
      Point addend = n.signum() < 0 ? negate() : this;
      BigInteger[] q = {addend.x, addend.y, BigInteger.ONE, addend.x.multiply(addend.y).mod(P)};
      BigInteger[] result = {BigInteger.ZERO, BigInteger.ONE, BigInteger.ONE, BigInteger.ZERO};
      BigInteger k = n.abs();
      for (int i = k.bitLength() - 1; i >= 0; i--) {
        result = addExtended(result, result);
        if (k.testBit(i)) {
          result = addExtended(result, q);
        }
      }
      BigInteger zInverse = result[2].modInverse(P);
      return new Point(result[0].multiply(zInverse).mod(P), result[1].multiply(zInverse).mod(P));
    }

    /** The complete addition of Hisil, Wong, Carter and Dawson for a = -1 on (X : Y : Z : T). */
    private static BigInteger[] addExtended(BigInteger[] p1, BigInteger[] p2) {
      BigInteger a = p1[1].subtract(p1[0]).multiply(p2[1].subtract(p2[0])).mod(P);
      BigInteger b = p1[1].add(p1[0]).multiply(p2[1].add(p2[0])).mod(P);
      BigInteger c = TWO_D.multiply(p1[3]).multiply(p2[3]).mod(P);
      BigInteger d = p1[2].multiply(p2[2]).shiftLeft(1).mod(P);
      BigInteger e = b.subtract(a);
      BigInteger f = d.subtract(c);
      BigInteger g = d.add(c);
      BigInteger h = b.add(a);
      return new BigInteger[] {e.multiply(f).mod(P), g.multiply(h).mod(P), f.multiply(g).mod(P), e.multiply(h).mod(P)};
    }

    Point times(long n) {
      return times(BigInteger.valueOf(n));
    }

    boolean isIdentity() {
      return x.signum() == 0 && y.equals(BigInteger.ONE);
    }

    /** The canonical 32-byte encoding. */
    byte[] encode() {
      byte[] out = littleEndian(y);
      if (x.testBit(0)) {
        out[31] |= (byte) 0x80;
      }
      return out;
    }
  }

  /** The point an encoding names, or null when there is none; {@code lenient} reads y modulo p (y may be ≥ p). */
  static Point decode(byte[] encoded, boolean lenient) {
    byte[] copy = encoded.clone();
    boolean xOdd = (copy[31] & 0x80) != 0;
    copy[31] &= 0x7F;
    BigInteger y = fromLittleEndian(copy);
    if (y.compareTo(P) >= 0) {
      if (!lenient) {
        return null;
      }
      y = y.mod(P);
    }
    BigInteger u = y.multiply(y).subtract(BigInteger.ONE).mod(P);
    BigInteger v = D.multiply(y).multiply(y).add(BigInteger.ONE).mod(P);
    BigInteger x = sqrtRatio(u, v);
    if (x == null || (x.signum() == 0 && xOdd && !lenient)) {
      return null;
    }
    if (x.testBit(0) != xOdd) {
      x = x.negate().mod(P);
    }
    return new Point(x, y);
  }

  private static BigInteger sqrtRatio(BigInteger u, BigInteger v) {
    BigInteger x2 = u.multiply(v.modInverse(P)).mod(P);
    BigInteger x = x2.modPow(P.add(BigInteger.valueOf(3)).shiftRight(3), P);
    if (x.multiply(x).mod(P).equals(x2)) {
      return x;
    }
    x = x.multiply(SQRT_M1).mod(P);
    return x.multiply(x).mod(P).equals(x2) ? x : null;
  }

  /** The eight points of order dividing 8: [i]T for i = 0..7, T a point of order 8. */
  static List<Point> torsion() {
    return TORSION;
  }

  private static List<Point> findTorsion() {
    Point generator = null;
    for (int seed = 2; generator == null; seed++) {
      byte[] candidate = littleEndian(BigInteger.valueOf(seed));
      Point point = decode(candidate, false);
      if (point != null) {
        Point t = point.times(L);
        if (!t.times(4).isIdentity()) {
          generator = t;
        }
      }
    }
    List<Point> points = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      points.add(generator.times(i));
    }
    return List.copyOf(points);
  }

  /** Every encoding that some lenient decoder maps to a small-order point: canonical, y + p and the "negative zero" x. */
  static List<byte[]> smallOrderEncodings() {
    List<byte[]> encodings = new ArrayList<>();
    for (Point t : torsion()) {
      byte[] canonical = t.encode();
      encodings.add(canonical);
      if (t.x.signum() == 0) {
        byte[] negativeZero = canonical.clone();
        negativeZero[31] |= (byte) 0x80;
        encodings.add(negativeZero);
      }
      BigInteger plusP = t.y.add(P);
      if (plusP.bitLength() <= 255) {
        byte[] nonCanonical = littleEndian(plusP);
        nonCanonical[31] |= (byte) (canonical[31] & 0x80);
        encodings.add(nonCanonical);
        if (t.x.signum() == 0) {
          byte[] negativeZero = nonCanonical.clone();
          negativeZero[31] |= (byte) 0x80;
          encodings.add(negativeZero);
        }
      }
    }
    return encodings;
  }

  /** Every encoding whose y is p..2^255-1 (both signs of x), on the curve or not. */
  static List<byte[]> nonCanonicalEncodings() {
    List<byte[]> encodings = new ArrayList<>();
    for (BigInteger y = P; y.bitLength() <= 255; y = y.add(BigInteger.ONE)) {
      byte[] even = littleEndian(y);
      byte[] odd = even.clone();
      odd[31] |= (byte) 0x80;
      encodings.add(even);
      encodings.add(odd);
    }
    return encodings;
  }

  /** A y-coordinate encoding that names no point (x² would be a non-square). */
  static byte[] offCurveEncoding(int seed) {
    for (int y = seed; ; y++) {
      byte[] candidate = littleEndian(BigInteger.valueOf(y));
      if (decode(candidate, true) == null) {
        return candidate;
      }
    }
  }

  /** The expanded secret scalar of an RFC 8032 private key. */
  static BigInteger secretScalar(byte[] privateKey) {
    byte[] h = sha512(privateKey);
    byte[] a = Arrays.copyOf(h, 32);
    a[0] &= (byte) 0xF8;
    a[31] &= 0x7F;
    a[31] |= 0x40;
    return fromLittleEndian(a);
  }

  /** k = SHA-512(R || A || M) mod L. */
  static BigInteger challenge(byte[] r, byte[] a, byte[] message) {
    return fromLittleEndian(sha512(r, a, message)).mod(L);
  }

  static byte[] signature(byte[] r, BigInteger s) {
    byte[] out = Arrays.copyOf(r, 64);
    byte[] sBytes = littleEndian(s);
    System.arraycopy(sBytes, 0, out, 32, 32);
    return out;
  }

  static BigInteger scalarOf(byte[] signature) {
    return fromLittleEndian(Arrays.copyOfRange(signature, 32, 64));
  }

  static byte[] littleEndian(BigInteger n) {
    byte[] big = n.toByteArray();
    byte[] out = new byte[32];
    for (int i = 0; i < Math.min(big.length, 32); i++) {
      out[i] = big[big.length - 1 - i];
    }
    return out;
  }

  static BigInteger fromLittleEndian(byte[] bytes) {
    byte[] big = new byte[bytes.length];
    for (int i = 0; i < bytes.length; i++) {
      big[i] = bytes[bytes.length - 1 - i];
    }
    return new BigInteger(1, big);
  }

  static byte[] sha512(byte[]... parts) {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-512");
      for (byte[] part : parts) {
        digest.update(part);
      }
      return digest.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  static byte[] hex(String hex) {
    return java.util.HexFormat.of().parseHex(hex);
  }
}
