package org.shine.server.dm;

import org.bouncycastle.math.ec.rfc8032.Ed25519;

/**
 * BouncyCastle's RFC 8032 verification: the cofactored equation [8][S]B = [8]R + [8][k]A. Its answer is the
 * project's rule, which every other verifier must reproduce.
 */
final class BouncyCastleEd25519 implements Ed25519Verifier {
  @Override
  public String name() {
    return "BouncyCastle";
  }

  @Override
  public boolean verify(Ed25519Signer.PublicKey key, byte[] message, int offset, int length, byte[] signature,
      int sigOffset) {
    Ed25519.PublicPoint point = key.point();
    return point != null && Ed25519.verify(signature, sigOffset, point, message, offset, length);
  }
}
