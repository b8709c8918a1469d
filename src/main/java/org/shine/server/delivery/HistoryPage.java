package org.shine.server.delivery;

import java.util.List;
import org.shine.server.model.HistoryEntry;

/**
 * A page of history entries, newest first; {@code hasMore} when older entries exist (the page was full, or ended
 * early at the response byte cap).
 */
public record HistoryPage(List<HistoryEntry> messages, boolean hasMore) {
  public HistoryPage {
    messages = List.copyOf(messages);
  }

  /**
   * The page out of up to {@code limit + 1} entries read: at most {@code limit}, and no more than fit in a
   * response of {@code maxResponseBytes} (at least one).
   */
  public static HistoryPage of(List<HistoryEntry> read, int limit, int maxResponseBytes) {
    int fits = PageBudget.fits(read, limit, maxResponseBytes, entry -> entry.blob().length,
        entry -> entry.messageKey().length() + entry.baseKey().length());
    return new HistoryPage(read.subList(0, fits), read.size() > fits);
  }
}
