package org.shine.server.delivery;

import java.util.List;
import org.shine.server.model.HistoryEntry;

/**
 * A page of history entries, newest first; {@code hasMore} when older entries exist (the page was full, or ended
 * early at the response byte cap).
 */
public record HistoryPage(List<HistoryEntry> messages, boolean hasMore) {
  /** Room kept for the envelope. */
  private static final int ENVELOPE_BYTES = 1024;
  /** JSON field names, punctuation and the fixed fields of one entry, beside its keys and blob. */
  private static final int ENTRY_OVERHEAD_BYTES = 160;

  public HistoryPage {
    messages = List.copyOf(messages);
  }

  /**
   * The page out of up to {@code limit + 1} entries read: at most {@code limit}, and no more than fit in a
   * response of {@code maxResponseBytes} (at least one).
   */
  public static HistoryPage of(List<HistoryEntry> read, int limit, int maxResponseBytes) {
    int fits = Math.min(read.size(), limit);
    long bytes = ENVELOPE_BYTES;
    for (int i = 0; i < fits; i++) {
      HistoryEntry entry = read.get(i);
      bytes += (entry.blob().length + 2L) / 3 * 4 + entry.messageKey().length() + entry.baseKey().length()
          + ENTRY_OVERHEAD_BYTES;
      if (bytes > maxResponseBytes && i > 0) {
        fits = i;
        break;
      }
    }
    return new HistoryPage(read.subList(0, fits), read.size() > fits);
  }
}
