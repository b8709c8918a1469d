package org.shine.server.peer;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;

/** One call to another server: op and payload for {@code url}, answered within {@code timeoutMs}. */
public record PeerRequest(String url, String op, ObjectNode payload, long timeoutMs) {
  public PeerRequest {
    Objects.requireNonNull(url);
    Objects.requireNonNull(op);
    Objects.requireNonNull(payload);
  }
}
