package org.shine.server.model;

import java.util.List;
import java.util.OptionalLong;

/**
 * The fixed attempt schedule of seed §5: attempt {@code k} (1-based) is due at {@code acceptedAt +
 * scheduleMs[k-1]}; from attempt {@code askSiblingFromAttempt} on, the sender's sibling is asked first; after
 * the last attempt without an ACK the message is failed.
 */
public record DeliverySchedule(List<Long> scheduleMs, int askSiblingFromAttempt) {
  public DeliverySchedule {
    scheduleMs = List.copyOf(scheduleMs);
  }

  public int attempts() {
    return scheduleMs.size();
  }

  /** When attempt {@code attempt} (1-based) is due. */
  public long dueAt(long acceptedAtMs, int attempt) {
    return acceptedAtMs + scheduleMs.get(attempt - 1);
  }

  /** When the attempt after {@code attemptsDone} is due, or empty when none is left (the message fails). */
  public OptionalLong nextAfter(long acceptedAtMs, int attemptsDone) {
    return attemptsDone >= attempts() ? OptionalLong.empty() : OptionalLong.of(dueAt(acceptedAtMs, attemptsDone + 1));
  }

  public boolean asksSiblingFirst(int attempt) {
    return attempt >= askSiblingFromAttempt;
  }

  /**
   * For a pair that arrives late (by sync): the first attempt still ahead of {@code nowMs}, or empty when even the
   * last point has passed (then its state is decided by asking the source, never by sending).
   */
  public OptionalLong firstAttemptAhead(long acceptedAtMs, long nowMs) {
    for (int attempt = 1; attempt <= attempts(); attempt++) {
      if (dueAt(acceptedAtMs, attempt) >= nowMs) {
        return OptionalLong.of(attempt);
      }
    }
    return OptionalLong.empty();
  }
}
