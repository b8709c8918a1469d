package org.shine.server.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class HeardFromPacingTest {
  private static final long MS = 1_000_000L;
  private final AtomicLong nanos = new AtomicLong(123_456_789L);
  private final HeardFromPacing pacing = new HeardFromPacing(1_000, nanos::get);

  @Test
  @DisplayName("the first word heard moves a waiting retry to now; one heard within the interval moves the next to"
      + " the interval's end, and a third changes nothing")
  void oncePerInterval() {
    assertThat(pacing.heard(4_000)).as("a dial 4 s away goes now").isZero();

    nanos.addAndGet(100 * MS);
    assertThat(pacing.heard(4_800)).as("heard again 100 ms later: at the interval's end").isEqualTo(900);

    nanos.addAndGet(100 * MS);
    assertThat(pacing.heard(800)).as("the retry set for the interval's end keeps its place").isEqualTo(-1);
    assertThat(pacing.heard(5_000)).as("nor is another moved before the interval after it").isEqualTo(1_800);
  }

  @Test
  @DisplayName("a retry due sooner than the pacing allows keeps its own time")
  void soonerRetryKept() {
    assertThat(pacing.heard(0)).as("due now anyway").isEqualTo(-1);
    assertThat(pacing.heard(300)).isZero();
    nanos.addAndGet(200 * MS);
    assertThat(pacing.heard(500)).as("its own 500 ms come before the interval's end in 800 ms").isEqualTo(-1);
  }

  @Test
  @DisplayName("once an interval has passed since the last move, the next word moves a retry to now again")
  void afterTheInterval() {
    assertThat(pacing.heard(5_000)).isZero();
    nanos.addAndGet(1_000 * MS);
    assertThat(pacing.heard(5_000)).isZero();
    nanos.addAndGet(5_000 * MS);
    assertThat(pacing.heard(5_000)).isZero();
  }

  @Test
  @DisplayName("a peer that logs in every 10 ms for a minute while refusing our dials is dialed once a second, not"
      + " every 10 ms")
  void loginLoopBounded() {
    long dials = 0;
    long nextDialAtMs = 5_000;
    for (long nowMs = 0; nowMs < 60_000; nowMs += 10) {
      long wait = pacing.heard(nextDialAtMs - nowMs);
      if (wait >= 0) {
        nextDialAtMs = nowMs + wait;
      }
      if (nowMs >= nextDialAtMs) {
        // the dial is refused: the reconnect loop waits its cap again
        dials++;
        nextDialAtMs = nowMs + 5_000;
      }
      nanos.addAndGet(10 * MS);
    }
    assertThat(dials).as("one at 0 s, then one a second").isEqualTo(60);
  }

  @Test
  @DisplayName("the interval must be positive")
  void positiveInterval() {
    assertThatThrownBy(() -> new HeardFromPacing(0, nanos::get)).isInstanceOf(IllegalArgumentException.class);
  }
}
