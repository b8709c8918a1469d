package org.shine.server.sync;

/**
 * What became of one item a puller took from a sibling's page (PROTOCOL §8 v3): its syncId ({@value #NO_SYNC_ID}
 * when it had none that could be ACKed) and its {@link Fate}.
 */
record ItemResult(long syncId, Fate fate) {
  /** The syncId of an item that carries none the puller could read. */
  static final long NO_SYNC_ID = -1;

  /** What the puller did with an item. */
  enum Fate {
    /** Stored (or already stored): ACKed. */
    STORED,
    /** Refused by a rule that says so (a setting stamped in the future, PROTOCOL §6a): ACKed, not stored. */
    DROPPED,
    /** Cannot ever be stored as it is: ACKed and kept in {@code sync_quarantine}. */
    QUARANTINED,
    /** Not stored now (future-dated, owner not yet routed to both, transient failure): not ACKed, tried next run. */
    LEFT
  }

  static ItemResult stored(long syncId) {
    return new ItemResult(syncId, Fate.STORED);
  }

  static ItemResult left(long syncId) {
    return new ItemResult(syncId, Fate.LEFT);
  }

  /** Whether the source may mark it synced. */
  boolean acked() {
    return syncId != NO_SYNC_ID && fate != Fate.LEFT;
  }
}
