package org.shine.server.util;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.shine.server.util.PerKeyRate.Grant;

/** Grants per key and window (e.g. {@code sync.markAllPerUserPerMin}) on a clock the test moves by hand. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class PerKeyRateTest {
  private static final long MINUTE = TimeUnit.MINUTES.toNanos(1);
  private final AtomicLong nanos = new AtomicLong(987_654_321L);

  @Test
  @DisplayName("once a minute: the second request in the minute is refused, the first after it granted, each key"
      + " apart")
  void oncePerWindow() {
    PerKeyRate rate = new PerKeyRate(1, MINUTE, 100, nanos::get);

    assertThat(rate.tryAcquire("alice")).isEqualTo(Grant.GRANTED);
    assertThat(rate.tryAcquire("alice")).isEqualTo(Grant.LIMITED);
    assertThat(rate.tryAcquire("bob")).isEqualTo(Grant.GRANTED);
    nanos.addAndGet(MINUTE - 1);
    assertThat(rate.tryAcquire("alice")).isEqualTo(Grant.LIMITED);
    nanos.addAndGet(1);
    assertThat(rate.tryAcquire("alice")).isEqualTo(Grant.GRANTED);
  }

  @Test
  @DisplayName("N per minute: a burst of N, then one more every 1/N minute")
  void burstOfN() {
    PerKeyRate rate = new PerKeyRate(3, MINUTE, 100, nanos::get);
    for (int i = 0; i < 3; i++) {
      assertThat(rate.tryAcquire("alice")).as("request %d", i + 1).isEqualTo(Grant.GRANTED);
    }
    assertThat(rate.tryAcquire("alice")).isEqualTo(Grant.LIMITED);
    nanos.addAndGet(MINUTE / 3);
    assertThat(rate.tryAcquire("alice")).isEqualTo(Grant.GRANTED);
    assertThat(rate.tryAcquire("alice")).isEqualTo(Grant.LIMITED);
  }

  @Test
  @DisplayName("at most maxKeys keys are tracked: a new key is refused while they are all active, and let in once"
      + " one has been idle a window")
  void boundedKeys() {
    PerKeyRate rate = new PerKeyRate(1, MINUTE, 3, nanos::get);
    assertThat(rate.tryAcquire("a")).isEqualTo(Grant.GRANTED);
    nanos.addAndGet(MINUTE / 2);
    assertThat(rate.tryAcquire("b")).isEqualTo(Grant.GRANTED);
    assertThat(rate.tryAcquire("c")).isEqualTo(Grant.GRANTED);

    assertThat(rate.tryAcquire("d")).isEqualTo(Grant.FULL);
    assertThat(rate.tracked()).isEqualTo(3);

    nanos.addAndGet(MINUTE / 2);
    assertThat(rate.tryAcquire("d")).as("a's cell is full again and dropped").isEqualTo(Grant.GRANTED);
    assertThat(rate.tracked()).isEqualTo(3);
    assertThat(rate.tryAcquire("b")).as("b's window has not passed").isEqualTo(Grant.LIMITED);
  }

  @Test
  @DisplayName("a full table is swept for idle cells at most every 100 ms, not on every new key")
  void sweepsAreSpaced() {
    long window = 50_000_000L;
    PerKeyRate rate = new PerKeyRate(1, window, 2, nanos::get);
    assertThat(rate.tryAcquire("a")).isEqualTo(Grant.GRANTED);
    assertThat(rate.tryAcquire("b")).isEqualTo(Grant.GRANTED);
    assertThat(rate.tryAcquire("c")).as("both cells live (the table was swept now)").isEqualTo(Grant.FULL);

    // 60 ms on, a and b are idle, but the last sweep was 60 ms ago
    nanos.addAndGet(60_000_000L);
    assertThat(rate.tryAcquire("c")).isEqualTo(Grant.FULL);
    assertThat(rate.tracked()).isEqualTo(2);

    // 100 ms after the last sweep, the next one drops them
    nanos.addAndGet(40_000_000L);
    assertThat(rate.tryAcquire("c")).isEqualTo(Grant.GRANTED);
    assertThat(rate.tracked()).isEqualTo(1);
  }

  @Test
  @DisplayName("100,000 new keys against a table of 16 live cells leave 16 cells and are all refused")
  void floodOfNewKeys() {
    PerKeyRate rate = new PerKeyRate(1, MINUTE, 16, nanos::get);
    for (int i = 0; i < 16; i++) {
      rate.tryAcquire("live" + i);
    }
    long granted = 0;
    for (int i = 0; i < 100_000; i++) {
      granted += rate.tryAcquire("new" + i) == Grant.GRANTED ? 1 : 0;
    }
    assertThat(granted).isZero();
    assertThat(rate.tracked()).isEqualTo(16);
  }
}
