package org.shine.server.protocol;

/** Response statuses of the envelope (PROTOCOL §2). */
public final class Status {
  public static final int OK = 200;
  public static final int BAD_REQUEST = 400;
  public static final int UNAUTHORIZED = 401;
  public static final int FORBIDDEN = 403;
  public static final int NOT_FOUND = 404;
  public static final int CONFLICT = 409;
  public static final int TOO_LARGE = 413;
  public static final int MISDIRECTED = 421;
  public static final int TOO_MANY_REQUESTS = 429;
  public static final int INTERNAL = 500;
  public static final int UNAVAILABLE = 503;

  private Status() {
  }
}
