package org.shine.server.protocol;

import java.util.Objects;

/** A request failure with the wire status and stable error code it maps to at the edge. */
public class ProtocolException extends RuntimeException {
  private final int status;
  private final String code;

  public ProtocolException(int status, String code, String message) {
    super(Objects.requireNonNull(message), null, false, false);
    this.status = status;
    this.code = Objects.requireNonNull(code);
  }

  public ProtocolException(int status, String code, String message, Throwable cause) {
    super(Objects.requireNonNull(message), cause, false, false);
    this.status = status;
    this.code = Objects.requireNonNull(code);
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }

  public static ProtocolException badRequest(String code, String message) {
    return new ProtocolException(Status.BAD_REQUEST, code, message);
  }
}
