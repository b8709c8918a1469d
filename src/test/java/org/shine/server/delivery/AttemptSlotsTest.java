package org.shine.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class AttemptSlotsTest {
  @Test
  @DisplayName("no more than the capacity is ever reserved, by any number of threads; released places come back")
  void bounded() throws Exception {
    AttemptSlots slots = new AttemptSlots(100);
    AtomicInteger granted = new AtomicInteger();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      Thread thread = new Thread(() -> {
        for (int i = 0; i < 1_000; i++) {
          if (slots.reserve()) {
            granted.incrementAndGet();
          }
        }
      });
      threads.add(thread);
      thread.start();
    }
    for (Thread thread : threads) {
      thread.join();
    }
    assertThat(granted.get()).isEqualTo(100);
    assertThat(slots.free()).isZero();
    assertThat(slots.reserve()).isFalse();
    slots.release();
    assertThat(slots.free()).isEqualTo(1);
    assertThat(slots.reserve()).isTrue();
  }

  @Test
  @DisplayName("a release without a reservation is a bug and is refused")
  void overRelease() {
    AttemptSlots slots = new AttemptSlots(1);
    assertThatThrownBy(slots::release).isInstanceOf(IllegalStateException.class);
    assertThat(slots.free()).isEqualTo(1);
  }
}
