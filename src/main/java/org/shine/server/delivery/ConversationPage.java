package org.shine.server.delivery;

import java.util.List;
import org.shine.server.model.ConversationEntry;

/** A page of the chat list, newest first; {@code hasMore} when older conversations exist. */
public record ConversationPage(List<ConversationEntry> conversations, boolean hasMore) {
  private static final int ENVELOPE_BYTES = 1024;
  /** Field names, punctuation and the fixed fields of one entry, beside its key, peer and blob. */
  private static final int ENTRY_OVERHEAD_BYTES = 160;

  public ConversationPage {
    conversations = List.copyOf(conversations);
  }

  /**
   * The page out of up to {@code limit + 1} entries read: at most {@code limit}, and no more than fit in a response
   * of {@code maxResponseBytes} (at least one).
   */
  public static ConversationPage of(List<ConversationEntry> read, int limit, int maxResponseBytes) {
    int fits = Math.min(read.size(), limit);
    long bytes = ENVELOPE_BYTES;
    for (int i = 0; i < fits; i++) {
      ConversationEntry entry = read.get(i);
      bytes += (entry.lastBlob().length + 2L) / 3 * 4 + entry.lastMessageKey().length() + entry.peer().length()
          + ENTRY_OVERHEAD_BYTES;
      if (bytes > maxResponseBytes && i > 0) {
        fits = i;
        break;
      }
    }
    return new ConversationPage(read.subList(0, fits), read.size() > fits);
  }
}
