package org.shine.server.util;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The per-key rate of the §13 limits, on a clock the test moves by hand. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class PerKeyRateTest {
  private static final long SECOND = 1_000_000_000L;
  private final AtomicLong nanos = new AtomicLong(987_654_321L);

  @Test
  @DisplayName("a key gets a burst of exactly N, then one more every period/N; refusals are not counted")
  void burstThenSteadyRate() {
    PerKeyRate rate = new PerKeyRate(4, SECOND, 100, nanos::get);
    for (int i = 0; i < 4; i++) {
      assertThat(rate.tryAcquire("a")).as("act %d of the burst", i + 1).isTrue();
    }
    for (int i = 0; i < 10; i++) {
      assertThat(rate.tryAcquire("a")).as("after the burst").isFalse();
    }
    assertThat(rate.tryAcquire("b")).as("another key has a burst of its own").isTrue();

    nanos.addAndGet(SECOND / 4 - 1);
    assertThat(rate.tryAcquire("a")).as("just before a quarter second").isFalse();
    nanos.addAndGet(1);
    assertThat(rate.tryAcquire("a")).as("after a quarter second").isTrue();
    assertThat(rate.tryAcquire("a")).as("a second act in the same quarter").isFalse();
  }

  @Test
  @DisplayName("a rate per minute: 30 at once, then one every two seconds")
  void perMinute() {
    PerKeyRate rate = new PerKeyRate(30, 60 * SECOND, 100, nanos::get);
    for (int i = 0; i < 30; i++) {
      assertThat(rate.tryAcquire("127.0.0.1")).isTrue();
    }
    assertThat(rate.tryAcquire("127.0.0.1")).isFalse();
    nanos.addAndGet(2 * SECOND);
    assertThat(rate.tryAcquire("127.0.0.1")).isTrue();
    assertThat(rate.tryAcquire("127.0.0.1")).isFalse();
  }

  @Test
  @DisplayName("the table never holds more than maxKeys cells: while they are live, new keys share one overflow"
      + " cell of the same rate; once the old cells are idle for a period, new keys get cells of their own")
  void tableIsBounded() {
    PerKeyRate rate = new PerKeyRate(2, SECOND, 3, nanos::get);
    for (String key : new String[] {"a", "b", "c"}) {
      assertThat(rate.tryAcquire(key)).isTrue();
    }
    assertThat(rate.tracked()).isEqualTo(3);

    // a flood of new keys while the three cells are live: all of them together get one key's burst
    int admitted = 0;
    for (int i = 0; i < 1_000; i++) {
      admitted += rate.tryAcquire("new-" + i) ? 1 : 0;
    }
    assertThat(admitted).isEqualTo(2);
    assertThat(rate.tracked()).isEqualTo(3);
    assertThat(rate.tryAcquire("a")).as("a key with a cell keeps its own rate").isTrue();

    // a whole period later every cell is full again: the next new key sweeps them and gets a cell of its own
    nanos.addAndGet(SECOND + PerKeyRate.SWEEP_EVERY_NANOS);
    assertThat(rate.tryAcquire("d")).isTrue();
    assertThat(rate.tryAcquire("d")).isTrue();
    assertThat(rate.tryAcquire("d")).isFalse();
    assertThat(rate.tracked()).isEqualTo(1);
  }

  @Test
  @DisplayName("a full table is swept for idle cells at most every 100 ms, not on every call")
  void sweepsAreSpaced() {
    long period = 50_000_000L;
    PerKeyRate rate = new PerKeyRate(1, period, 2, nanos::get);
    assertThat(rate.tryAcquire("a")).isTrue();
    assertThat(rate.tryAcquire("b")).isTrue();
    assertThat(rate.tryAcquire("c")).as("the table is full of live cells (swept now): the overflow cell").isTrue();
    assertThat(rate.tracked()).isEqualTo(2);

    // 60 ms on, a and b are idle, but the last sweep was 60 ms ago: new keys still share the overflow cell
    nanos.addAndGet(60_000_000L);
    assertThat(rate.tryAcquire("d")).as("the overflow cell has refilled").isTrue();
    assertThat(rate.tryAcquire("e")).as("the overflow cell is spent").isFalse();
    assertThat(rate.tracked()).isEqualTo(2);

    // 100 ms after the last sweep, the next one frees the idle cells
    nanos.addAndGet(40_000_000L);
    assertThat(rate.tryAcquire("e")).isTrue();
    assertThat(rate.tracked()).isEqualTo(1);
  }
}
