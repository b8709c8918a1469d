package org.shine.server.cli;

/**
 * A failure the command line reports as one line on stderr with its exit code (never a stack trace). The codes are
 * listed in README ("Exit codes") and stay stable for scripts.
 */
public final class CliFailure extends RuntimeException {
  /** The command did what it could not: the server answered an error not covered below, or another failure. */
  public static final int FAILED = 1;
  /** Bad command line or config file. */
  public static final int USAGE = 2;
  /** The server cannot be reached, did not answer in time, or the connection was lost. */
  public static final int UNREACHABLE = 3;
  /** The server refused the login: wrong key for that user, or the server does not serve that user. */
  public static final int LOGIN_REFUSED = 4;
  /** Unknown user or message. */
  public static final int NOT_FOUND = 5;
  /** The key file cannot be read or is not a key file. */
  public static final int BAD_KEY_FILE = 6;
  /** A contact's served card does not follow from the one pinned (keys changed in a way the devices did not sign). */
  public static final int KEYS_CHANGED = 7;

  private final int exitCode;

  public CliFailure(int exitCode, String message) {
    super(message, null, false, false);
    this.exitCode = exitCode;
  }

  public static CliFailure usage(String message) {
    return new CliFailure(USAGE, message);
  }

  public int exitCode() {
    return exitCode;
  }
}
