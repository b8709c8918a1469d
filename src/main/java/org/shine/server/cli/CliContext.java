package org.shine.server.cli;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What a command talks to: its input, output and error streams, the environment, whether the output is a terminal,
 * and a stop signal. {@link #system()} is the real process; tests build one over pipes and stop it when done.
 */
public final class CliContext {
  private final BufferedReader in;
  private final PrintWriter out;
  private final PrintWriter err;
  private final Map<String, String> env;
  private final boolean terminal;
  private final boolean interactive;
  private final CountDownLatch stopped = new CountDownLatch(1);
  private final List<Runnable> stopActions = new CopyOnWriteArrayList<>();

  public CliContext(InputStream in, PrintStream out, PrintStream err, Map<String, String> env, boolean terminal) {
    this(in, out, err, env, terminal, false);
  }

  private CliContext(InputStream in, PrintStream out, PrintStream err, Map<String, String> env, boolean terminal,
      boolean interactive) {
    this.in = new BufferedReader(new InputStreamReader(Objects.requireNonNull(in), StandardCharsets.UTF_8));
    this.out = new PrintWriter(Objects.requireNonNull(out), true, StandardCharsets.UTF_8);
    this.err = new PrintWriter(Objects.requireNonNull(err), true, StandardCharsets.UTF_8);
    this.env = Map.copyOf(env);
    this.terminal = terminal;
    this.interactive = interactive;
  }

  /**
   * The process's own streams. Colours and redrawn lines only when standard output is a terminal: {@code
   * System.console()} is non-null only when both standard input and output are (Java 17), and {@code NO_COLOR}
   * (any value) turns them off.
   */
  public static CliContext system() {
    boolean interactive = System.console() != null;
    boolean terminal = interactive && System.getenv("NO_COLOR") == null && !"dumb".equals(System.getenv("TERM"));
    CliContext context = new CliContext(System.in, System.out, System.err, System.getenv(), terminal, interactive);
    Runtime.getRuntime().addShutdownHook(new Thread(context::stop, "cli-stop"));
    return context;
  }

  public BufferedReader in() {
    return in;
  }

  public PrintWriter out() {
    return out;
  }

  public PrintWriter err() {
    return err;
  }

  public Map<String, String> env() {
    return env;
  }

  /** True when the output is an interactive terminal (colours, lines redrawn in place, progress bars). */
  public boolean terminal() {
    return terminal;
  }

  /**
   * True when a person types at a terminal: standard input and output are one (the process's own streams only), so
   * a command may read keys through a line editor. Independent of colours ({@code NO_COLOR}).
   */
  public boolean interactive() {
    return interactive;
  }

  /**
   * Asks a long-running command ({@code listen}, {@code chat}, {@code adapter run}) to end, running its {@link
   * #onStop} actions on this thread; Ctrl-C does it for the real process (in a shutdown hook, which therefore
   * waits for them).
   */
  public void stop() {
    if (stopped.getCount() == 0) {
      return;
    }
    stopped.countDown();
    stopActions.forEach(Runnable::run);
  }

  /** An action {@link #stop()} runs, such as letting the adapter finish its receive cycle. */
  public void onStop(Runnable action) {
    stopActions.add(Objects.requireNonNull(action));
    if (isStopped() && stopActions.remove(action)) {
      action.run(); // stopped before the action was registered
    }
  }

  public boolean isStopped() {
    return stopped.getCount() == 0;
  }

  /** Blocks the command's own thread (never an event loop) until {@link #stop()} or {@code ms} have passed. */
  public boolean awaitStop(long ms) {
    try {
      return stopped.await(ms, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return true;
    }
  }
}
