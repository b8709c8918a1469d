package org.shine.server.delivery;

import java.util.List;
import java.util.Objects;

/**
 * One DM outbox item pulled from {@code owner}'s sibling: a pair (incoming then outgoing blob) or a recipient's
 * incoming copy; {@code sourceUrl} is where to ask for the pair's delivery status.
 */
public record SyncedItem(String owner, boolean pair, List<byte[]> blobs, String sourceServerLogin, String sourceUrl) {
  public SyncedItem {
    Objects.requireNonNull(owner);
    blobs = List.copyOf(blobs);
    Objects.requireNonNull(sourceServerLogin);
    Objects.requireNonNull(sourceUrl);
  }
}
