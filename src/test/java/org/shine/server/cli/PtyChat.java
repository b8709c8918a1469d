package org.shine.server.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The real command line ({@code java ... Main ARGS}) run in a pseudo-terminal of a given size ({@code script}), as a
 * person at a terminal runs it: keys go in as the terminal sends them (Enter is a carriage return, Ctrl-C the byte
 * 3), and what the program writes is drawn on a {@link Vt100}, whose screen the test reads.
 */
final class PtyChat implements AutoCloseable {
  static final String ENTER = "\r";
  static final String CTRL_C = "\u0003";
  private final Process process;
  private final OutputStream keyboard;
  private final Vt100 screen;
  private final StringBuffer raw = new StringBuffer();

  private PtyChat(Process process, int columns, int rows) {
    this.process = process;
    this.keyboard = process.getOutputStream();
    this.screen = new Vt100(columns, rows, this::send);
    Thread reader = new Thread(() -> {
      try (var in = process.getInputStream()) {
        byte[] buffer = new byte[8192];
        for (int n; (n = in.read(buffer)) > 0; ) {
          screen.write(buffer, n);
          raw.append(new String(buffer, 0, n, StandardCharsets.UTF_8));
        }
      } catch (IOException e) {
        raw.append("\n(read failed: ").append(e).append(')');
      }
    }, "pty-reader");
    reader.setDaemon(true);
    reader.start();
  }

  /** Starts {@code Main args} in a pseudo-terminal of {@code columns} × {@code rows}. */
  static PtyChat start(int columns, int rows, String... args) throws IOException {
    List<String> command = new ArrayList<>(List.of(quote(Path.of(System.getProperty("java.home"), "bin", "java")
        .toString()), "-cp", quote(System.getProperty("java.class.path")), "org.shine.server.Main"));
    for (String arg : args) {
      command.add(quote(arg));
    }
    String shell = "stty cols " + columns + " rows " + rows + " && exec " + String.join(" ", command);
    ProcessBuilder builder = new ProcessBuilder("script", "-q", "-e", "-c", shell, "/dev/null")
        .redirectErrorStream(true);
    builder.environment().put("TERM", "xterm");
    builder.environment().remove("NO_COLOR");
    return new PtyChat(builder.start(), columns, rows);
  }

  /** Keys as typed: text, {@link #ENTER}, {@link #CTRL_C}, all in one write. */
  void keys(String keys) {
    send(keys);
  }

  private synchronized void send(String bytes) {
    try {
      keyboard.write(bytes.getBytes(StandardCharsets.UTF_8));
      keyboard.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The screen now, row by row. */
  String screen() {
    return screen.text();
  }

  /** The screen's rows joined without breaks (a wrapped line reads whole). */
  String joined() {
    return screen.joined();
  }

  /** Everything the program wrote, escape sequences included. */
  String raw() {
    return raw.toString();
  }

  /** Waits for the program to end; answers its exit code, or -1 when it did not end in time. */
  int exitCode(long seconds) throws InterruptedException {
    return process.waitFor(seconds, TimeUnit.SECONDS) ? process.exitValue() : -1;
  }

  @Override
  public void close() {
    process.destroyForcibly();
  }

  private static String quote(String word) {
    return "'" + word.replace("'", "'\\''") + "'";
  }
}
