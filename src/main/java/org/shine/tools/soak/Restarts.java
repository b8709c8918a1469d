package org.shine.tools.soak;

import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * The soak's restarts, on a thread of their own: every {@code --restart-every-s} the next server of the rotation is
 * stopped (SIGTERM; SIGKILL after 60 s), started again with the same command on the same database, and waited for
 * until healthy. A restart under way is never cut short by the end of the load.
 */
final class Restarts {
  private final SoakSettings settings;
  private final ServerProcesses servers;
  private final AtomicBoolean on = new AtomicBoolean(true);
  private final AtomicBoolean restarting = new AtomicBoolean();
  private final LongAdder done = new LongAdder();
  private Thread thread;

  Restarts(SoakSettings settings, ServerProcesses servers) {
    this.settings = settings;
    this.servers = servers;
  }

  /** The loop's thread, its first restart {@code --restart-every-s} after {@code startMs}. */
  void start(long startMs) {
    thread = SoakThreads.thread("soak-restarts", () -> loop(startMs));
  }

  /** Ends the loop, after the restart under way if there is one. */
  void stop() throws InterruptedException {
    on.set(false);
    thread.interrupt();
    thread.join();
  }

  /** True while a server is being stopped or started (a sample now would measure the restart). */
  boolean restarting() {
    return restarting.get();
  }

  long count() {
    return done.sum();
  }

  private void loop(long startMs) {
    if (settings.restartEveryS() == 0 || settings.restartOrder().isEmpty()) {
      return;
    }
    int next = 0;
    long at = startMs;
    while (on.get()) {
      at += TimeUnit.SECONDS.toMillis(settings.restartEveryS());
      try {
        SoakThreads.sleepUntil(at);
      } catch (InterruptedException e) {
        return;
      }
      if (!on.get()) {
        return;
      }
      // a stop asked for from here on waits for this restart to end instead of leaving the server half-restarted
      Thread.interrupted();
      restarting.set(true);
      try {
        restart(settings.restartOrder().get(next++ % settings.restartOrder().size()));
      } finally {
        restarting.set(false);
      }
    }
  }

  /** SIGTERM, wait for the exit (60 s, then SIGKILL), start the same command again and wait for /health. */
  private void restart(String name) {
    long began = System.currentTimeMillis();
    ProcessHandle.of(servers.pidOf(name)).ifPresent(process -> stopProcess(name, process));
    long stopped = System.currentTimeMillis();
    servers.start(name);
    servers.awaitHealthy(name);
    done.increment();
    System.out.printf(Locale.ROOT, "restart %s: stopped in %.1f s, healthy %.1f s later (pid %d)%n", name,
        (stopped - began) / 1000.0, (System.currentTimeMillis() - stopped) / 1000.0, servers.pidOf(name));
  }

  private static void stopProcess(String name, ProcessHandle process) {
    process.destroy();
    try {
      process.onExit().get(60, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      System.out.println("restart " + name + ": no exit 60 s after SIGTERM; killing it");
      process.destroyForcibly();
    } catch (ExecutionException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.interrupted();
    }
  }
}
