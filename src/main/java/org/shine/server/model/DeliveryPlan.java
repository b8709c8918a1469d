package org.shine.server.model;

/**
 * The initial delivery row of a new outgoing copy: its state, the time its schedule counts from, the attempts
 * counted as made, when the next is due ({@code null} for a terminal state) and the lease held by an attempt
 * about to run (0: none). An {@code accepted} row always has a next attempt and a final one never has (the table's
 * check says the same; refusing it here names the plan that would break it).
 */
public record DeliveryPlan(DeliveryState state, long acceptedAtMs, int attemptsDone, Long nextAttemptAtMs,
    long leaseUntilMs) {
  public DeliveryPlan {
    if ((state == DeliveryState.ACCEPTED) != (nextAttemptAtMs != null)) {
      throw new IllegalArgumentException("an accepted delivery row needs a next attempt and a final one has none: "
          + state + " with next attempt " + nextAttemptAtMs);
    }
  }
}
