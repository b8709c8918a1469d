package org.shine.server.peer;

import java.util.Objects;

/**
 * A signature to check with another server's key (PROTOCOL §6a): {@code serverLogin} claims to have signed
 * {@code signedBytes}. {@code url}, when given, is where that server's key may be fetched (the URL a caller dialed);
 * otherwise the URL this server knows for it. {@code source} is the address the claim came from (null for a claim
 * this server met as a caller), by which key fetches are limited.
 */
public record ServerLoginCheck(String serverLogin, byte[] signedBytes, byte[] signature, String url, String source) {
  public ServerLoginCheck {
    Objects.requireNonNull(serverLogin);
    Objects.requireNonNull(signedBytes);
    Objects.requireNonNull(signature);
  }
}
