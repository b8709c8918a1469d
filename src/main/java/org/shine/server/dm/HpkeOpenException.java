package org.shine.server.dm;

/** An HPKE ciphertext cannot be opened: its encapsulated key is unusable or it does not authenticate. */
public final class HpkeOpenException extends Exception {
  public HpkeOpenException(String message) {
    super(message, null, false, false);
  }
}
