package org.shine.server.adapter;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a command with the event as JSON on its stdin; exit code 0 is success. */
public final class CommandHandler implements EventHandler {
  private static final long TIMEOUT_S = 300;
  private final List<String> command;

  public CommandHandler(String commandLine) {
    this.command = List.of("/bin/sh", "-c", commandLine);
  }

  @Override
  public void handle(JsonNode event) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.INHERIT)
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try (OutputStream in = process.getOutputStream()) {
      in.write((event.toString() + "\n").getBytes(StandardCharsets.UTF_8));
    }
    if (!process.waitFor(TIMEOUT_S, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IOException("command timed out after " + TIMEOUT_S + " s");
    }
    if (process.exitValue() != 0) {
      throw new IOException("command exited with " + process.exitValue());
    }
  }
}
