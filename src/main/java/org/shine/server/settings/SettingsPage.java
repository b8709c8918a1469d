package org.shine.server.settings;

import java.util.List;
import org.shine.server.db.SettingsRepository.Setting;

/**
 * A page of a user's settings in key order (Unicode code points); {@code nextKey}, the last key of the page, when
 * more follow (the next page is asked for with it as {@code afterKey}), else null.
 */
public record SettingsPage(List<Setting> settings, String nextKey) {
  /** Room kept for the envelope and {@code nextKey}'s field name. */
  private static final int ENVELOPE_BYTES = 1024;
  /** Quotes, colon and comma around one key and its value. */
  private static final int ENTRY_OVERHEAD_BYTES = 4;

  public SettingsPage {
    settings = List.copyOf(settings);
  }

  /**
   * The page out of up to {@code limit + 1} settings read: at most {@code limit}, and no more than fit in a response
   * of {@code maxResponseBytes} with the next key (at least one setting, whatever its size).
   */
  public static SettingsPage of(List<Setting> read, int limit, int maxResponseBytes) {
    int fits = Math.min(read.size(), limit);
    long bytes = ENVELOPE_BYTES;
    for (int i = 0; i < fits; i++) {
      Setting setting = read.get(i);
      long keyBytes = jsonStringBytes(setting.key());
      bytes += keyBytes + utf8Bytes(setting.valueJson()) + ENTRY_OVERHEAD_BYTES;
      // the key is written twice when it ends a page that is followed by more
      if (bytes + keyBytes > maxResponseBytes && i > 0) {
        fits = i;
        break;
      }
    }
    boolean more = read.size() > fits;
    return new SettingsPage(read.subList(0, fits), more ? read.get(fits - 1).key() : null);
  }

  /** At most what {@code text} takes as a JSON string without its quotes (escapes counted at their longest). */
  static long jsonStringBytes(String text) {
    long bytes = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      bytes += c < 0x20 ? 6 : c == '"' || c == '\\' ? 2 : utf8Bytes(c);
    }
    return bytes;
  }

  /** The UTF-8 size of {@code text} (JSON text as stored: written out as it is). */
  static long utf8Bytes(String text) {
    long bytes = 0;
    for (int i = 0; i < text.length(); i++) {
      bytes += utf8Bytes(text.charAt(i));
    }
    return bytes;
  }

  /** A surrogate pair is 4 bytes in all, 2 per half. */
  private static int utf8Bytes(char c) {
    return c < 0x80 ? 1 : c < 0x800 || Character.isSurrogate(c) ? 2 : 3;
  }
}
