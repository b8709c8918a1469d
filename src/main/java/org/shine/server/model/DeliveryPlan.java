package org.shine.server.model;

/**
 * The initial delivery row of a new outgoing copy: its state, the time its schedule counts from, the attempts
 * counted as made, when the next is due ({@code null} for a terminal state) and the lease held by an attempt
 * about to run (0: none).
 */
public record DeliveryPlan(DeliveryState state, long acceptedAtMs, int attemptsDone, Long nextAttemptAtMs,
    long leaseUntilMs) {
}
