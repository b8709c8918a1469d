package org.shine.server.delivery;

import java.util.Objects;

/**
 * One delivery attempt to make: attempt number {@code attempt} (1-based) of the pair {@code baseKey} at
 * {@code revision}, holding the row at {@code rowVersion}; {@code incomingBlob} is the recipient's copy.
 */
public record DeliveryTask(String baseKey, long revision, String sender, String recipient, byte[] incomingBlob,
    long acceptedAtMs, int attempt, long rowVersion) {
  public DeliveryTask {
    Objects.requireNonNull(baseKey);
    Objects.requireNonNull(sender);
    Objects.requireNonNull(recipient);
    Objects.requireNonNull(incomingBlob);
  }
}
