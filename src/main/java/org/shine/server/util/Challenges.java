package org.shine.server.util;

import java.security.SecureRandom;
import java.util.Base64;

/** The random challenges a login signs (AuthLogin, ServerAuthLogin, the hub's token): 32 bytes, standard base64. */
public final class Challenges {
  private static final SecureRandom RANDOM = new SecureRandom();
  /** Random bytes in a challenge. */
  public static final int BYTES = 32;

  private Challenges() {
  }

  public static String newChallengeB64() {
    byte[] challenge = new byte[BYTES];
    RANDOM.nextBytes(challenge);
    return Base64.getEncoder().encodeToString(challenge);
  }
}
