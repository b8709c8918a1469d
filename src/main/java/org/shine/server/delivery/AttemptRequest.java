package org.shine.server.delivery;

import java.util.Objects;
import org.shine.server.model.DeliveryState;
import org.shine.server.model.StoredUser;

/**
 * What a producer hands the node's {@link DeliveryEngine} over {@code delivery.attempt}, holding one place of
 * {@link AttemptSlots} that the engine gives back when the attempt is recorded. {@code notifySender}: push a
 * terminal state to the sender's sessions (not when the sender waits for the answer itself).
 * {@code forward}: after the attempt, forward the pair to the sender's sibling (seed §4 step 7); null for none.
 * {@code sender} and {@code recipient}: the users as the producer just read them (the first attempt of a send), so
 * the engine does not read them again; null when the engine reads them. {@code asksSiblingFirst}: ask the sender's
 * sibling for the pair's state before calling any route, whatever the attempt's number (the first attempt of a pair
 * the sibling forwarded: the sibling made its own first attempt just before). The reply is the
 * {@link DeliveryState} recorded.
 */
public record AttemptRequest(DeliveryTask task, boolean notifySender, ForwardRequest forward, StoredUser sender,
    StoredUser recipient, boolean asksSiblingFirst) {
  public AttemptRequest {
    Objects.requireNonNull(task);
    if ((sender == null) != (recipient == null)) {
      throw new IllegalArgumentException("an attempt carries both users or neither");
    }
    if (sender != null && !(sender.login().equals(task.sender()) && recipient.login().equals(task.recipient()))) {
      throw new IllegalArgumentException("the users carried are not the attempt's sender and recipient");
    }
  }

  /** An attempt that asks the sender's sibling first only where the schedule says so. */
  public AttemptRequest(DeliveryTask task, boolean notifySender, ForwardRequest forward, StoredUser sender,
      StoredUser recipient) {
    this(task, notifySender, forward, sender, recipient, false);
  }

  /** An attempt whose users the engine reads. */
  public AttemptRequest(DeliveryTask task, boolean notifySender, ForwardRequest forward) {
    this(task, notifySender, forward, null, null);
  }
}
