package org.shine.server.support;

import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Polls a condition in the test thread (never on an event loop) until it holds or the time is up. */
public final class Eventually {
  private Eventually() {
  }

  public static void until(String what, long timeoutMs, BooleanSupplier condition) {
    until(what, timeoutMs, condition, () -> "");
  }

  /** As {@link #until(String, long, BooleanSupplier)}; a timeout's message ends with what {@code seen} says then. */
  public static void until(String what, long timeoutMs, BooleanSupplier condition, Supplier<String> seen) {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) {
        String now = seen.get();
        throw new AssertionError("timed out after " + timeoutMs + " ms waiting for: " + what
            + (now.isEmpty() ? "" : "; seen:\n" + now));
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }
}
