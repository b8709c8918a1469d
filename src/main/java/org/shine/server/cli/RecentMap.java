package org.shine.server.cli;

import java.util.LinkedHashMap;
import java.util.Map;

/** The chat's memory of what it showed: a map that keeps its newest {@code max} entries (by insertion). */
final class RecentMap {
  private RecentMap() {
  }

  static <K, V> Map<K, V> of(int max) {
    return new LinkedHashMap<>(16, 0.75f, false) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
        return size() > max;
      }
    };
  }
}
