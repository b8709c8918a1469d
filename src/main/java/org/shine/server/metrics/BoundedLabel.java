package org.shine.server.metrics;

import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The values one label may take (PROTOCOL §12): the first {@code limit} distinct values are kept as they are, every
 * later one is {@value #OTHER}, so a series count never grows with the servers a card names. Any thread.
 */
public final class BoundedLabel {
  /** The value of every distinct value beyond the limit. */
  public static final String OTHER = "other";
  private final int limit;
  private final Set<String> seen = ConcurrentHashMap.newKeySet();

  public BoundedLabel(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1");
    }
    this.limit = limit;
  }

  /** {@code value} while it is one of the first {@code limit} distinct values, else {@value #OTHER}. */
  public String of(String value) {
    Objects.requireNonNull(value);
    if (seen.contains(value)) {
      return value;
    }
    // two threads may both pass the size check once at the edge; the bound stays within a few values of the limit
    if (seen.size() >= limit) {
      return OTHER;
    }
    seen.add(value);
    return value;
  }
}
