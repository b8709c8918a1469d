package org.shine.server.peer;

/**
 * What one peer connection may hold (PROTOCOL §11, §13): {@code window} calls in flight (the smaller of the peer's
 * per-connection limit and {@code delivery.maxInFlightPerDestination}), {@code maxWaiting} more waiting for the
 * window, {@code timeoutsToDown} timeouts in a row before the destination is down, and {@code writeQueueBytes}
 * unsent bytes before its socket is closed and the destination is down.
 */
record CallLimits(int window, int maxWaiting, int timeoutsToDown, int writeQueueBytes) {
  CallLimits {
    if (window < 1 || maxWaiting < 0 || timeoutsToDown < 1 || writeQueueBytes < 1) {
      throw new IllegalArgumentException("peer call limits must be positive");
    }
  }
}
