package org.shine.server.node;

import io.vertx.core.Vertx;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Halts the process on any {@link OutOfMemoryError} that reaches a handler: a JVM that ran out of memory once may
 * have lost event-loop threads and keep answering {@code /health} while new connections go unanswered, so it must
 * end and be restarted. Installed as the JVM's default uncaught-exception handler and as every node's Vert.x
 * exception handler, since outside tools start the jar with a plain {@code java -jar}; the launch scripts add
 * {@code -XX:+ExitOnOutOfMemoryError}, which also covers errors that Vert.x or Netty catch themselves (a worker
 * task's failure, a channel handler).
 */
public final class OutOfMemoryHalt {
  /** The exit status, the same as the JVM's own {@code -XX:+ExitOnOutOfMemoryError}. */
  public static final int STATUS = 3;
  private static final Logger LOG = LoggerFactory.getLogger(OutOfMemoryHalt.class);
  private static final IntConsumer RUNTIME_HALT = status -> Runtime.getRuntime().halt(status);

  private OutOfMemoryHalt() {
  }

  /** The JVM's default uncaught-exception handler halts on an {@link OutOfMemoryError} (others are printed). */
  public static void installDefault() {
    Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
    Thread.setDefaultUncaughtExceptionHandler((thread, failure) -> {
      if (haltIfOutOfMemory(failure, RUNTIME_HALT)) {
        return;
      }
      if (previous != null) {
        previous.uncaughtException(thread, failure);
      } else {
        LOG.error("uncaught exception [thread: {}]", thread.getName(), failure);
      }
    });
  }

  /** {@code vertx}'s exception handler halts on an {@link OutOfMemoryError}; others are left to the context. */
  public static Vertx install(Vertx vertx) {
    return install(vertx, RUNTIME_HALT);
  }

  /** As {@link #install(Vertx)} with {@code halt} in place of {@link Runtime#halt} (tests). */
  static Vertx install(Vertx vertx, IntConsumer halt) {
    // replaces Vert.x's own logging of a handler's unhandled failure, so that one is logged here
    vertx.exceptionHandler(failure -> {
      if (!haltIfOutOfMemory(failure, halt)) {
        LOG.error("unhandled exception in a handler", failure);
      }
    });
    return vertx;
  }

  /** True when {@code failure} is, or was caused by, an {@link OutOfMemoryError}: then {@code halt} ran. */
  static boolean haltIfOutOfMemory(Throwable failure, IntConsumer halt) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof OutOfMemoryError) {
        // no logging framework here: it may need memory that is not there; one preallocated-ish line at most
        System.err.println("out of memory: halting the process");
        halt.accept(STATUS);
        return true;
      }
    }
    return false;
  }
}
