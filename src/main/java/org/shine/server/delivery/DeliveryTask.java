package org.shine.server.delivery;

import java.util.Objects;
import org.shine.server.dm.DmKind;

/**
 * One delivery attempt to make: attempt number {@code attempt} (1-based) of {@code baseKey} at {@code revision},
 * holding the row at {@code rowVersion}. {@code incomingBlob} is what the recipient gets: the incoming copy of a
 * pair, or a read receipt (then {@code sender} is the reader and {@code recipient} the original sender). An
 * {@code extra} attempt (PROTOCOL §7.6: a recipient server came back) runs beside the schedule: {@code attempt}
 * is then the number of attempts already made, and without an ACK the row keeps {@code nextAttemptAtMs}.
 */
public record DeliveryTask(String baseKey, long revision, String sender, String recipient, byte[] incomingBlob,
    long acceptedAtMs, int attempt, long rowVersion, boolean extra, Long nextAttemptAtMs) {

  public DeliveryTask {
    Objects.requireNonNull(baseKey);
    Objects.requireNonNull(sender);
    Objects.requireNonNull(recipient);
    Objects.requireNonNull(incomingBlob);
    if (extra && nextAttemptAtMs == null) {
      throw new IllegalArgumentException("an extra attempt keeps the row's next attempt time");
    }
  }

  /** A scheduled attempt. */
  public static DeliveryTask scheduled(String baseKey, long revision, String sender, String recipient,
      byte[] incomingBlob, long acceptedAtMs, int attempt, long rowVersion) {
    return new DeliveryTask(baseKey, revision, sender, recipient, incomingBlob, acceptedAtMs, attempt, rowVersion,
        false, null);
  }

  /** True when this delivers a read receipt rather than a message. */
  public boolean receipt() {
    return incomingBlob.length > 9 && incomingBlob[9] == (byte) DmKind.READ_RECEIPT.code();
  }

  /** The key the sender's sibling knows this delivery by: the outgoing key, or the receipt's key. */
  public String statusKey() {
    return baseKey + (receipt() ? "|3" : "|2");
  }
}
