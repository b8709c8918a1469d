package org.shine.server.model;

import java.util.Objects;

/**
 * What a server has seen of one of a user's keys (PROTOCOL §4 v3, {@code user_key_history}): retired (and when, null
 * when it was revoked without being retired first) and/or revoked. Kept whatever later cards list.
 */
public record KeyHistoryEntry(String publicKeyB64, Long retiredAtMs, boolean revoked) {
  public KeyHistoryEntry {
    Objects.requireNonNull(publicKeyB64);
  }
}
