package org.shine.server.db;

/**
 * A storage queue is full (a micro-batcher's waiting requests reached their bound): nothing was stored, the
 * request may be retried later. Mapped to a wire status at the edge (429 {@code OVERLOADED}).
 */
public final class StorageBusyException extends RuntimeException {
  public StorageBusyException(String message) {
    super(message, null, false, false);
  }
}
