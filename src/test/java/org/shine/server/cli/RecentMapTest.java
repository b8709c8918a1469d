package org.shine.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class RecentMapTest {

  @Test
  @DisplayName("the chat's memory keeps its newest entries up to its bound and forgets the eldest")
  void bounded() {
    Map<String, Integer> recent = RecentMap.of(3);
    for (int i = 1; i <= 5; i++) {
      recent.put("m" + i, i);
    }
    assertThat(recent).containsOnlyKeys("m3", "m4", "m5");
  }
}
