package org.shine.server.sync;

import java.util.List;
import org.shine.server.db.SyncRepository.SettingItem;

/** A page of settings outbox items and whether more wait. */
public record SettingsSyncPage(List<SettingItem> items, boolean hasMore) {
  public SettingsSyncPage {
    items = List.copyOf(items);
  }
}
