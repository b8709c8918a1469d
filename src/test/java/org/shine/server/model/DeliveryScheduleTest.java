package org.shine.server.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.config.AppConfig;
import org.shine.server.config.ConfigLoader;

class DeliveryScheduleTest {
  private static final long ACCEPTED_AT = 1_700_000_000_000L;
  private static final long SECOND = 1_000;
  private static final long MINUTE = 60 * SECOND;
  private static final AppConfig.Delivery DEFAULTS = ConfigLoader.defaultsConfig().delivery();
  private final DeliverySchedule schedule = new DeliverySchedule(DEFAULTS.scheduleMs(), DEFAULTS.askSiblingFromAttempt());

  @Test
  @DisplayName("the default schedule has five attempts: at 0, 30 s, 5 min, 25 min and 60 min after acceptance")
  void defaultPoints() {
    assertThat(schedule.attempts()).isEqualTo(5);
    assertThat(IntStream.rangeClosed(1, 5).mapToLong(attempt -> schedule.dueAt(ACCEPTED_AT, attempt) - ACCEPTED_AT))
        .containsExactly(0L, 30 * SECOND, 5 * MINUTE, 25 * MINUTE, 60 * MINUTE);
  }

  @Test
  @DisplayName("after each attempt without an ACK the next point is due; after the fifth none is left (failed)")
  void nextAfterEachAttempt() {
    assertThat(schedule.nextAfter(ACCEPTED_AT, 0)).hasValue(ACCEPTED_AT);
    assertThat(schedule.nextAfter(ACCEPTED_AT, 1)).hasValue(ACCEPTED_AT + 30 * SECOND);
    assertThat(schedule.nextAfter(ACCEPTED_AT, 2)).hasValue(ACCEPTED_AT + 5 * MINUTE);
    assertThat(schedule.nextAfter(ACCEPTED_AT, 3)).hasValue(ACCEPTED_AT + 25 * MINUTE);
    assertThat(schedule.nextAfter(ACCEPTED_AT, 4)).hasValue(ACCEPTED_AT + 60 * MINUTE);
    assertThat(schedule.nextAfter(ACCEPTED_AT, 5)).as("the last attempt failed: the message fails").isEmpty();
  }

  @Test
  @DisplayName("the sender's sibling is asked first at the 5, 25 and 60 minute attempts, not at 0 or 30 s")
  void siblingFirst() {
    assertThat(IntStream.rangeClosed(1, 5).mapToObj(schedule::asksSiblingFirst))
        .containsExactly(false, false, true, true, true);
  }

  @Test
  @DisplayName("a pair arriving late joins the schedule at the first point still ahead; past the last, none")
  void lateArrival() {
    assertThat(schedule.firstAttemptAhead(ACCEPTED_AT, ACCEPTED_AT)).hasValue(1);
    assertThat(schedule.firstAttemptAhead(ACCEPTED_AT, ACCEPTED_AT + 1)).hasValue(2);
    assertThat(schedule.firstAttemptAhead(ACCEPTED_AT, ACCEPTED_AT + 5 * MINUTE)).hasValue(3);
    assertThat(schedule.firstAttemptAhead(ACCEPTED_AT, ACCEPTED_AT + 26 * MINUTE)).hasValue(5);
    assertThat(schedule.firstAttemptAhead(ACCEPTED_AT, ACCEPTED_AT + 60 * MINUTE + 1)).isEqualTo(OptionalLong.empty());
  }
}
