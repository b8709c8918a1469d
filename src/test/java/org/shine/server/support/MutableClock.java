package org.shine.server.support;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock tests move by hand. */
public final class MutableClock extends Clock {
  private final AtomicLong millis;

  public MutableClock(long startMillis) {
    this.millis = new AtomicLong(startMillis);
  }

  public static MutableClock now() {
    return new MutableClock(System.currentTimeMillis());
  }

  public void advance(Duration duration) {
    millis.addAndGet(duration.toMillis());
  }

  @Override
  public long millis() {
    return millis.get();
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis());
  }
}
