package org.shine.server.model;

import org.shine.server.dm.DmKind;

/**
 * One copy to write: the sender's OUTGOING copy (with {@code pairBlob}, the incoming copy it delivers, and the
 * {@code plan} of its new delivery row) or a recipient's INCOMING copy ({@code pairBlob} and {@code plan} null).
 * {@code hub} is the hub queue entry written with the copy (its owner polls), or null. {@code syncHoldUntilMs}: when
 * an unsynced copy's sync queue rows may first be offered to the owner's sibling (0: at once; a session's new pair
 * waits for its forward, seed §4 step 7; a recipient's copy from a delivery may wait for the sibling's pull, PROTOCOL
 * §8 "the copy hold").
 */
public record CopyWrite(CopyKey key, DmKind direction, String peer, long createdAtMs, long revision, byte[] blob,
    byte[] pairBlob, DeliveryPlan plan, boolean synced, HubEntry hub, long syncHoldUntilMs) {

  /** A copy without a hub entry, offered to sync at once. */
  public CopyWrite(CopyKey key, DmKind direction, String peer, long createdAtMs, long revision, byte[] blob,
      byte[] pairBlob, DeliveryPlan plan, boolean synced) {
    this(key, direction, peer, createdAtMs, revision, blob, pairBlob, plan, synced, null, 0);
  }

  /** A recipient's incoming copy, with the hub entry of its {@code IncomingDirectMessage} (or null). */
  public static CopyWrite incoming(CopyKey key, String author, long createdAtMs, long revision, byte[] blob,
      boolean synced, HubEntry hub) {
    return incoming(key, author, createdAtMs, revision, blob, synced, hub, 0);
  }

  /** As above, offered to sync from {@code syncHoldUntilMs} (a copy both recipient's servers got by delivery). */
  public static CopyWrite incoming(CopyKey key, String author, long createdAtMs, long revision, byte[] blob,
      boolean synced, HubEntry hub, long syncHoldUntilMs) {
    return new CopyWrite(key, DmKind.INCOMING, author, createdAtMs, revision, blob, null, null, synced, hub,
        syncHoldUntilMs);
  }
}
