package org.shine.server.model;

import org.shine.server.dm.DmKind;

/**
 * One copy to write: the sender's OUTGOING copy (with {@code pairBlob}, the incoming copy it delivers, and the
 * {@code plan} of its new delivery row) or a recipient's INCOMING copy ({@code pairBlob} and {@code plan} null).
 */
public record CopyWrite(CopyKey key, DmKind direction, String peer, long createdAtMs, long revision, byte[] blob,
    byte[] pairBlob, DeliveryPlan plan, boolean synced) {

  /** A recipient's incoming copy. */
  public static CopyWrite incoming(CopyKey key, String author, long createdAtMs, long revision, byte[] blob,
      boolean synced) {
    return new CopyWrite(key, DmKind.INCOMING, author, createdAtMs, revision, blob, null, null, synced);
  }
}
