package org.shine.server.util;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The pacing of the retry and sync timers through trouble. */
class BackoffTest {
  private static final long MS = 1_000_000L;

  @Test
  @DisplayName("failures double the wait up to the cap, and only the first failure and the recovery say so")
  void doublesUpToTheCapAndReportsChangesOnly() {
    Backoff backoff = new Backoff(100, 800);
    long now = 0;
    assertThat(backoff.due(now)).isTrue();

    assertThat(backoff.failed(now)).as("the first failure starts a spell").isTrue();
    assertThat(backoff.delayMs()).isEqualTo(200);
    assertThat(backoff.due(now + 199 * MS)).isFalse();
    assertThat(backoff.due(now + 200 * MS)).isTrue();
    now += 200 * MS;
    assertThat(backoff.failed(now)).as("a later failure is the same spell").isFalse();
    assertThat(backoff.delayMs()).isEqualTo(400);
    for (int i = 0; i < 100; i++) {
      backoff.failed(now);
    }
    assertThat(backoff.delayMs()).as("bounded").isEqualTo(800);
    assertThat(backoff.backingOff()).isTrue();

    assertThat(backoff.succeeded()).as("a success ends the spell").isTrue();
    assertThat(backoff.succeeded()).as("and says so once").isFalse();
    assertThat(backoff.due(now)).isTrue();
    assertThat(backoff.delayMs()).isEqualTo(100);
  }

  @Test
  @DisplayName("a retry loop waits its first delay after the first failure, then twice that up to the cap, and"
      + " starts again at the first delay after a reset")
  void retries() {
    Backoff backoff = Backoff.retries(250, 5_000);
    assertThat(backoff.delayMs()).as("while nothing fails").isEqualTo(250);
    long[] delays = new long[7];
    for (int i = 0; i < delays.length; i++) {
      backoff.failed(0);
      delays[i] = backoff.delayMs();
    }
    assertThat(delays).containsExactly(250, 500, 1_000, 2_000, 4_000, 5_000, 5_000);
    for (int i = 0; i < 100; i++) {
      backoff.failed(0);
    }
    assertThat(backoff.delayMs()).as("bounded after many failures").isEqualTo(5_000);

    backoff.reset();
    backoff.failed(0);
    assertThat(backoff.delayMs()).isEqualTo(250);
  }

  @Test
  @DisplayName("a jittered wait lies in the upper half of the delay")
  void jitter() {
    Backoff backoff = Backoff.retries(1_000, 8_000);
    backoff.failed(0);
    backoff.failed(0);
    for (int i = 0; i < 1_000; i++) {
      assertThat(backoff.jitteredDelayMs()).isBetween(1_000L, 2_000L);
    }
    assertThat(Backoff.jitter(0)).isZero();
    assertThat(Backoff.jitter(1)).isBetween(0L, 1L);
  }

  @Test
  @DisplayName("reset ends a spell at once (the trouble is known to be over)")
  void reset() {
    Backoff backoff = new Backoff(50, 400);
    backoff.failed(0);
    backoff.failed(0);
    assertThat(backoff.due(10 * MS)).isFalse();

    assertThat(backoff.reset()).isTrue();

    assertThat(backoff.due(10 * MS)).isTrue();
    assertThat(backoff.reset()).isFalse();
  }
}
