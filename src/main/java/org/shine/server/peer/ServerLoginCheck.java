package org.shine.server.peer;

import java.util.Objects;

/** A ServerAuthLogin to check: {@code serverLogin} claims to have signed {@code signedBytes} with its key. */
public record ServerLoginCheck(String serverLogin, byte[] signedBytes, byte[] signature) {
  public ServerLoginCheck {
    Objects.requireNonNull(serverLogin);
    Objects.requireNonNull(signedBytes);
    Objects.requireNonNull(signature);
  }
}
