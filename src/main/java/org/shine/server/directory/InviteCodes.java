package org.shine.server.directory;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * Invite codes of {@code directory.registration} "invite" (PROTOCOL §13): 18 random bytes as unpadded base64url (24
 * characters); the server keeps only their SHA-256. A code lives at most {@link #MAX_LIFETIME_S} (7 days).
 */
public final class InviteCodes {
  /** The longest an invite code is valid, and its default lifetime. */
  public static final long MAX_LIFETIME_S = 7L * 24 * 3600;
  /** The shortest lifetime the admin API gives a code. */
  public static final long MIN_LIFETIME_S = 60;
  /** Longer text is no code this server made (refused before hashing). */
  public static final int MAX_CODE_CHARS = 64;
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final int CODE_BYTES = 18;

  private InviteCodes() {
  }

  /** A fresh code, as handed to the operator (and by them to the user). */
  public static String mint() {
    byte[] code = new byte[CODE_BYTES];
    RANDOM.nextBytes(code);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(code);
  }

  /** What the server stores and looks a code up by. */
  public static byte[] hash(String code) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(code.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
