package org.shine.server.delivery;

import java.util.List;

/** A page of history entries, newest first. */
public record HistoryPage(List<HistoryEntry> messages) {
  public HistoryPage {
    messages = List.copyOf(messages);
  }
}
