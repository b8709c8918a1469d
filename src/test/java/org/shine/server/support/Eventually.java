package org.shine.server.support;

import java.util.function.BooleanSupplier;

/** Polls a condition in the test thread (never on an event loop) until it holds or the time is up. */
public final class Eventually {
  private Eventually() {
  }

  public static void until(String what, long timeoutMs, BooleanSupplier condition) {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("timed out after " + timeoutMs + " ms waiting for: " + what);
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
