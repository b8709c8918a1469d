package org.shine.server.delivery;

import java.util.List;
import java.util.function.ToLongFunction;

/**
 * How many entries of a page read from storage go into one response: at most {@code limit}, and no more than fit in
 * {@code maxResponseBytes} (at least one), counting each entry's variable part, its blob as base64, and a fixed
 * overhead. History and the chat list are both paged so.
 */
final class PageBudget {
  /** Room kept for the envelope. */
  private static final int ENVELOPE_BYTES = 1024;
  /** JSON field names, punctuation and the fixed fields of one entry, beside its keys and blob. */
  private static final int ENTRY_OVERHEAD_BYTES = 160;

  private PageBudget() {
  }

  /**
   * The number of entries of {@code read} (up to {@code limit + 1} read, one more telling whether older ones exist)
   * that go into the response; {@code blobLength} and {@code keysLength} measure an entry.
   */
  static <T> int fits(List<T> read, int limit, int maxResponseBytes, ToLongFunction<T> blobLength,
      ToLongFunction<T> keysLength) {
    int fits = Math.min(read.size(), limit);
    long bytes = ENVELOPE_BYTES;
    for (int i = 0; i < fits; i++) {
      T entry = read.get(i);
      bytes += (blobLength.applyAsLong(entry) + 2) / 3 * 4 + keysLength.applyAsLong(entry) + ENTRY_OVERHEAD_BYTES;
      if (bytes > maxResponseBytes && i > 0) {
        return i;
      }
    }
    return fits;
  }
}
