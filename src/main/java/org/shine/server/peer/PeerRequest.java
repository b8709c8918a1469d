package org.shine.server.peer;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;

/**
 * One call to another server: op and payload for {@code url}, answered within {@code timeoutMs};
 * {@code needsSession} for ops the peer serves only on an authenticated server session (the sync ops).
 */
public record PeerRequest(String url, String op, ObjectNode payload, long timeoutMs, boolean needsSession) {
  public PeerRequest {
    Objects.requireNonNull(url);
    Objects.requireNonNull(op);
    Objects.requireNonNull(payload);
  }
}
