package org.shine.server.dm;

/** The bytes are not exactly one well-formed SHiNE_DM container. */
public class DmFormatException extends Exception {
  private final boolean tooLarge;

  public DmFormatException(String message) {
    this(message, false);
  }

  public DmFormatException(String message, boolean tooLarge) {
    super(message, null, false, false);
    this.tooLarge = tooLarge;
  }

  /** True when the container is well formed so far but its body exceeds the size limit. */
  public boolean tooLarge() {
    return tooLarge;
  }
}
