package org.shine.server.delivery;

import java.util.Objects;

/**
 * A pair to forward to its sender's sibling (seed §4 step 7), by the node's {@link DeliveryEngine}: after the first
 * attempt ({@link AttemptRequest#forward()}), or alone over {@code delivery.forward} when the pair
 * needed no attempt here (its recipient is served here) or found no attempt place. {@code onlyIfOwed}: the sender's
 * session sent a pair stored here already, so it goes only while the sibling's sync queue row still waits for it (a
 * node that stored it may have died before its forward, and sync may not reach this server).
 */
public record ForwardRequest(String sender, String baseKey, long revision, byte[] incomingBlob, byte[] outgoingBlob,
    boolean onlyIfOwed) {
  public ForwardRequest {
    Objects.requireNonNull(sender);
    Objects.requireNonNull(baseKey);
    Objects.requireNonNull(incomingBlob);
    Objects.requireNonNull(outgoingBlob);
  }
}
