package org.shine.server.delivery;

import java.util.Objects;
import org.shine.server.model.DeliveryState;

/**
 * What a producer hands the node's {@link DeliveryEngine} over {@code delivery.attempt}, holding one place of
 * {@link AttemptSlots} that the engine gives back when the attempt is recorded. {@code notifySender}: push a
 * terminal state to the sender's sessions (not when the sender waits for the answer itself).
 * {@code forward}: after the attempt, forward the pair to the sender's sibling (seed §4 step 7); null for none. The
 * reply is the {@link DeliveryState} recorded.
 */
public record AttemptRequest(DeliveryTask task, boolean notifySender, ForwardRequest forward) {
  public AttemptRequest {
    Objects.requireNonNull(task);
  }
}
