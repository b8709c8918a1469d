package org.shine.server.delivery;

import java.util.List;
import org.shine.server.model.ConversationEntry;

/** A page of the chat list, newest first; {@code hasMore} when older conversations exist. */
public record ConversationPage(List<ConversationEntry> conversations, boolean hasMore) {
  public ConversationPage {
    conversations = List.copyOf(conversations);
  }

  /**
   * The page out of up to {@code limit + 1} entries read: at most {@code limit}, and no more than fit in a response
   * of {@code maxResponseBytes} (at least one).
   */
  public static ConversationPage of(List<ConversationEntry> read, int limit, int maxResponseBytes) {
    int fits = PageBudget.fits(read, limit, maxResponseBytes, entry -> entry.lastBlob().length,
        entry -> entry.lastMessageKey().length() + entry.peer().length());
    return new ConversationPage(read.subList(0, fits), read.size() > fits);
  }
}
