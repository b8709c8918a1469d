package org.shine.tools.support;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.shine.server.cli.CliContext;

/**
 * Progress of long work on stderr: a line every second ({@code catch-up: 1200/100000 (1.2 %), 450/s, 3 s}), or one
 * bar redrawn in place on a terminal, and a summary line when the work ends.
 */
public final class Progress implements AutoCloseable {
  private static final int BAR = 30;
  private final String what;
  private final PrintWriter err;
  private final boolean terminal;
  private final long total;
  private final LongSupplier done;
  private final long startNanos = System.nanoTime();
  private final ScheduledExecutorService ticker;

  private Progress(String what, PrintWriter err, boolean terminal, long total, LongSupplier done) {
    this.what = Objects.requireNonNull(what);
    this.err = Objects.requireNonNull(err);
    this.terminal = terminal;
    this.total = total;
    this.done = Objects.requireNonNull(done);
    this.ticker = Executors.newSingleThreadScheduledExecutor(runnable -> {
      Thread thread = new Thread(runnable, "progress");
      thread.setDaemon(true);
      return thread;
    });
  }

  /** Starts reporting {@code done} out of {@code total} (0: no known total) every second until {@link #close}. */
  public static Progress start(String what, CliContext context, long total, LongSupplier done) {
    Progress progress = new Progress(what, context.err(), context.terminal(), total, done);
    progress.ticker.scheduleAtFixedRate(progress::tick, 1, 1, TimeUnit.SECONDS);
    return progress;
  }

  private void tick() {
    String line = line(done.getAsLong(), System.nanoTime() - startNanos);
    if (terminal) {
      err.print("\r\u001b[2K" + line);
      err.flush();
    } else {
      err.println(line);
    }
  }

  /** One report: the bar (on a terminal), done of total, the percentage, the rate, the time so far. */
  public String line(long count, long elapsedNanos) {
    double seconds = Math.max(elapsedNanos / 1e9, 1e-9);
    StringBuilder line = new StringBuilder(what).append(": ");
    if (terminal && total > 0) {
      int filled = (int) Math.min(BAR, count * BAR / total);
      line.append('[').append("#".repeat(filled)).append(".".repeat(BAR - filled)).append("] ");
    }
    line.append(count);
    if (total > 0) {
      line.append('/').append(total).append(String.format(Locale.ROOT, " (%.1f %%)", 100.0 * count / total));
    }
    return line.append(String.format(Locale.ROOT, ", %.0f/s, %.0f s", count / seconds, seconds)).toString();
  }

  /** Stops the reports and prints the summary. */
  @Override
  public void close() {
    ticker.shutdownNow();
    long count = done.getAsLong();
    double seconds = (System.nanoTime() - startNanos) / 1e9;
    if (terminal) {
      err.print("\r\u001b[2K");
    }
    err.println(String.format(Locale.ROOT, "%s: done, %d in %.1f s (%.0f/s)", what, count, seconds,
        count / Math.max(seconds, 1e-9)));
  }
}
