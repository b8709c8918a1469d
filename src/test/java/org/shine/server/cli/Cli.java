package org.shine.server.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The command line run in this JVM as {@code java -jar shine-server.jar ARGS} runs it (same parsing, same error
 * reporting, no {@code System.exit}), with its streams captured; long-running commands run on a thread of their own.
 */
final class Cli {
  private Cli() {
  }

  /** What a finished command left. */
  record Result(int exitCode, String out, String err) {
  }

  static Result run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    CliContext context = new CliContext(InputStream.nullInputStream(), new PrintStream(out, true,
        StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(), false);
    int code = ShineCli.execute(context, args);
    return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** Starts a command that runs until stopped; its standard input is a pipe the test writes lines into. */
  static Running start(String... args) {
    return new Running(args);
  }

  /** A command running on its own thread. */
  static final class Running implements AutoCloseable {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final PipedOutputStream input = new PipedOutputStream();
    private final CliContext context;
    private final CompletableFuture<Integer> exit = new CompletableFuture<>();

    private Running(String[] args) {
      try {
        context = new CliContext(new PipedInputStream(input, 1 << 16), new PrintStream(out, true,
            StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), Map.of("LINES", "50"), false);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      Thread thread = new Thread(() -> exit.complete(ShineCli.execute(context, args)), "cli-under-test");
      thread.setDaemon(true);
      thread.start();
    }

    String out() {
      return out.toString(StandardCharsets.UTF_8);
    }

    String err() {
      return err.toString(StandardCharsets.UTF_8);
    }

    /** Types a line (as a user pressing Enter). */
    void type(String line) {
      try {
        input.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        input.flush();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    boolean exited() {
      return exit.isDone();
    }

    int exitCode() {
      try {
        return exit.get(30, TimeUnit.SECONDS);
      } catch (Exception e) {
        throw new AssertionError("the command did not end: " + e);
      }
    }

    /** Ctrl-C: the command ends as on SIGINT; answers its exit code. */
    @Override
    public void close() {
      context.stop();
      try {
        input.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      exitCode();
    }
  }
}
