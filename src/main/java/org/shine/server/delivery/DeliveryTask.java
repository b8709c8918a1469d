package org.shine.server.delivery;

import java.util.Objects;

/**
 * One delivery attempt to make: attempt number {@code attempt} (1-based) of {@code baseKey} at {@code revision},
 * holding the row at {@code rowVersion}. {@code incomingBlob} is what the recipient gets: the incoming copy of a
 * pair, or a read receipt (then {@code sender} is the reader and {@code recipient} the original sender).
 */
public record DeliveryTask(String baseKey, long revision, String sender, String recipient, byte[] incomingBlob,
    long acceptedAtMs, int attempt, long rowVersion) {

  /** True when this delivers a read receipt rather than a message. */
  public boolean receipt() {
    return incomingBlob.length > 9 && incomingBlob[9] == (byte) org.shine.server.dm.DmKind.READ_RECEIPT.code();
  }

  /** The key the sender's sibling knows this delivery by: the outgoing key, or the receipt's key. */
  public String statusKey() {
    return baseKey + (receipt() ? "|3" : "|2");
  }

  public DeliveryTask {
    Objects.requireNonNull(baseKey);
    Objects.requireNonNull(sender);
    Objects.requireNonNull(recipient);
    Objects.requireNonNull(incomingBlob);
  }
}
