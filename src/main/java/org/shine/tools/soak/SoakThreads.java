package org.shine.tools.soak;

/** The soak's own threads and waits: daemon threads, sleeping until a time, sleeping without being cut short. */
final class SoakThreads {
  private SoakThreads() {
  }

  static Thread thread(String name, Runnable body) {
    Thread thread = new Thread(body, name);
    thread.setDaemon(true);
    thread.start();
    return thread;
  }

  static void sleepUntil(long atMs) throws InterruptedException {
    long wait = atMs - System.currentTimeMillis();
    if (wait > 0) {
      Thread.sleep(wait);
    }
  }

  /** Sleeps {@code ms}; an interrupt ends the sleep and stays set for the caller to see. */
  static void sleepQuietly(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
