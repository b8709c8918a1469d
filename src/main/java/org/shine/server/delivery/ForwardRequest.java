package org.shine.server.delivery;

import java.util.Objects;

/**
 * A pair to forward to its sender's sibling (seed §4 step 7), by the node's {@link DeliveryEngine}: after the first
 * attempt ({@link AttemptRequest#forward()}), or alone over {@code delivery.forward} when the pair
 * needed no attempt here (its recipient is served here) or found no attempt place.
 */
public record ForwardRequest(String sender, String baseKey, long revision, byte[] incomingBlob, byte[] outgoingBlob) {
  public ForwardRequest {
    Objects.requireNonNull(sender);
    Objects.requireNonNull(baseKey);
    Objects.requireNonNull(incomingBlob);
    Objects.requireNonNull(outgoingBlob);
  }
}
