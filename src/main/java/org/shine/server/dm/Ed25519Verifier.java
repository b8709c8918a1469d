package org.shine.server.dm;

/**
 * One provider's check of an Ed25519 signature. It is only called with a key and a signature that passed
 * {@link Ed25519Rules} and with a message range inside its array; it answers, never throws.
 */
interface Ed25519Verifier {
  /** The provider, as the startup log names it. */
  String name();

  boolean verify(Ed25519Signer.PublicKey key, byte[] message, int offset, int length, byte[] signature,
      int sigOffset);
}
