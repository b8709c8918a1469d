package org.shine.server.model;

/** A stored copy: its revision, bytes, and (outgoing copies) the delivery state of that revision. */
public record StoredCopy(CopyKey key, long revision, byte[] blob, byte[] pairBlob, DeliveryState deliveryState) {
}
