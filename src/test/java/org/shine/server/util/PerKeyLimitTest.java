package org.shine.server.util;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class PerKeyLimitTest {

  @Test
  @DisplayName("each key holds at most perKey places, keys do not share them, and a released place comes back")
  void boundsEachKey() {
    PerKeyLimit limit = new PerKeyLimit(2);

    assertThat(limit.tryAcquire("a")).isTrue();
    assertThat(limit.tryAcquire("a")).isTrue();
    assertThat(limit.tryAcquire("a")).isFalse();
    assertThat(limit.tryAcquire("b")).isTrue();
    limit.release("a");
    assertThat(limit.held("a")).isEqualTo(1);
    assertThat(limit.tryAcquire("a")).isTrue();
  }

  @Test
  @DisplayName("a key whose places are all given back leaves no entry behind")
  void emptyKeysAreDropped() {
    PerKeyLimit limit = new PerKeyLimit(3);
    limit.tryAcquire("a");
    limit.release("a");
    limit.release("a");

    assertThat(limit.held("a")).isZero();
    assertThat(limit.tryAcquire("a")).isTrue();
    assertThat(limit.held("a")).isEqualTo(1);
  }
}
