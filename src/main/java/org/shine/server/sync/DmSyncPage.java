package org.shine.server.sync;

import java.util.List;
import org.shine.server.db.SyncRepository.DmItem;

/** A page of DM outbox items and whether more wait. */
public record DmSyncPage(List<DmItem> items, boolean hasMore) {
  public DmSyncPage {
    items = List.copyOf(items);
  }
}
