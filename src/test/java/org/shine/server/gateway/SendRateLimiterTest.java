package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The per-user write rate (PROTOCOL §11 {@code sendsPerUserPerS}) on a clock the test moves by hand. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class SendRateLimiterTest {
  private static final long SECOND = 1_000_000_000L;
  private final AtomicLong nanos = new AtomicLong(123_456_789L);

  @Test
  @DisplayName("a user gets a burst of exactly N writes, then one more every 1/N s")
  void burstThenSteadyRate() {
    SendRateLimiter limiter = new SendRateLimiter(5, 100, nanos::get);

    for (int i = 0; i < 5; i++) {
      assertThat(limiter.tryAcquire("alice")).as("write %d of the burst", i + 1).isTrue();
    }
    assertThat(limiter.tryAcquire("alice")).as("the write after the burst").isFalse();

    for (int step = 0; step < 3; step++) {
      advance(SECOND / 5 - 1);
      assertThat(limiter.tryAcquire("alice")).as("just before the next 1/5 s").isFalse();
      advance(1);
      assertThat(limiter.tryAcquire("alice")).as("after 1/5 s").isTrue();
      assertThat(limiter.tryAcquire("alice")).as("a second write in the same 1/5 s").isFalse();
    }
  }

  @Test
  @DisplayName("a refused write is not counted, and each user has a rate of its own")
  void refusalsAreFreeAndUsersIndependent() {
    SendRateLimiter limiter = new SendRateLimiter(2, 100, nanos::get);
    assertThat(limiter.tryAcquire("alice")).isTrue();
    assertThat(limiter.tryAcquire("alice")).isTrue();
    for (int i = 0; i < 10; i++) {
      assertThat(limiter.tryAcquire("alice")).isFalse();
    }

    assertThat(limiter.tryAcquire("bob")).isTrue();
    assertThat(limiter.tryAcquire("bob")).isTrue();

    // ten refusals did not push alice's next write further away than one interval
    advance(SECOND / 2);
    assertThat(limiter.tryAcquire("alice")).isTrue();
  }

  @Test
  @DisplayName("an idle user's full burst comes back after one second")
  void idleUserRefills() {
    SendRateLimiter limiter = new SendRateLimiter(4, 100, nanos::get);
    for (int i = 0; i < 4; i++) {
      assertThat(limiter.tryAcquire("alice")).isTrue();
    }
    assertThat(limiter.tryAcquire("alice")).isFalse();

    advance(10 * SECOND);

    for (int i = 0; i < 4; i++) {
      assertThat(limiter.tryAcquire("alice")).as("write %d of the new burst", i + 1).isTrue();
    }
    assertThat(limiter.tryAcquire("alice")).isFalse();
  }

  @Test
  @DisplayName("once maxUsers are tracked, the cells of idle users are evicted and those of active users kept")
  void idleCellsEvicted() {
    SendRateLimiter limiter = new SendRateLimiter(10, 3, nanos::get);
    // GIVEN alice and bob write once, carol uses her whole burst, all at once
    assertThat(limiter.tryAcquire("alice")).isTrue();
    assertThat(limiter.tryAcquire("bob")).isTrue();
    for (int i = 0; i < 10; i++) {
      assertThat(limiter.tryAcquire("carol")).isTrue();
    }
    assertThat(limiter.tracked()).isEqualTo(3);

    // WHEN, 1/5 s later (alice's and bob's cells are full again, carol's is not), a fourth user writes
    advance(SECOND / 5);
    assertThat(limiter.tryAcquire("dave")).isTrue();

    // THEN the idle cells went and carol's stayed: she has the two writes of 1/5 s back, not a new burst
    assertThat(limiter.tracked()).isEqualTo(2);
    assertThat(limiter.tryAcquire("carol")).isTrue();
    assertThat(limiter.tryAcquire("carol")).isTrue();
    assertThat(limiter.tryAcquire("carol")).isFalse();
    assertThat(limiter.tracked()).isEqualTo(2);
  }

  @Test
  @DisplayName("below maxUsers nothing is evicted, however long the cells have been idle")
  void noEvictionBelowMaxUsers() {
    SendRateLimiter limiter = new SendRateLimiter(10, 3, nanos::get);
    assertThat(limiter.tryAcquire("alice")).isTrue();
    advance(60 * SECOND);
    assertThat(limiter.tryAcquire("bob")).isTrue();
    assertThat(limiter.tracked()).isEqualTo(2);
  }

  private void advance(long delta) {
    nanos.addAndGet(delta);
  }
}
