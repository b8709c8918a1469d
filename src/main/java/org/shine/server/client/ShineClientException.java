package org.shine.server.client;

/** An error response from a server: its status and error code. */
public class ShineClientException extends RuntimeException {
  private final int status;
  private final String code;

  public ShineClientException(int status, String code, String message) {
    super(status + " " + code + ": " + message, null, false, false);
    this.status = status;
    this.code = code;
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }
}
