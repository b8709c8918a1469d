package org.shine.server.dm;

/** The {@code kind} byte of a SHiNE_DM container. */
public enum DmKind {
  INCOMING(1),
  OUTGOING(2),
  READ_RECEIPT(3),
  TOMBSTONE(4);

  private final int code;

  DmKind(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }

  /** The kind for a wire code, or {@code null} when the code is unknown. */
  public static DmKind fromCode(int code) {
    return switch (code) {
      case 1 -> INCOMING;
      case 2 -> OUTGOING;
      case 3 -> READ_RECEIPT;
      case 4 -> TOMBSTONE;
      default -> null;
    };
  }
}
