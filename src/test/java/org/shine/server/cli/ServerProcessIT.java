package org.shine.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.shine.server.support.Eventually;
import org.shine.server.support.TestDatabase;
import org.shine.server.support.TestServer;
import org.shine.server.util.Json;

/**
 * {@code server --config FILE} as its own process, stopped by SIGTERM ({@link Process#destroy()}) at the moments
 * where a signal once killed it (exit 143) instead of draining it: while it starts, and just after it said it is up.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 180, timeUnit = TimeUnit.SECONDS)
class ServerProcessIT {
  private final List<Process> started = new ArrayList<>();
  @TempDir
  Path dir;

  @AfterEach
  void stop() {
    started.forEach(Process::destroyForcibly);
  }

  @Test
  @DisplayName("SIGTERM while the server starts waits for the start, drains and exits 0")
  void signalWhileStarting(Vertx vertx) throws Exception {
    signalDrains(vertx, "starting s1:");
  }

  @Test
  @DisplayName("SIGTERM as soon as the server is up drains and exits 0")
  void signalJustAfterUp(Vertx vertx) throws Exception {
    signalDrains(vertx, "server s1 is up");
    // the native Ed25519 provider loads at start, on a worker: no event loop waits for it (it blocked one for 2 s
    // on a busy machine)
    assertThat(log().lines().filter(l -> l.contains("Ed25519 signatures verified by")))
        .singleElement().asString().contains("[vert.x-worker-thread-");
  }

  /** Starts a server, sends it SIGTERM as soon as its log shows {@code line}: it drains and exits 0. */
  private void signalDrains(Vertx vertx, String line) throws Exception {
    try (TestDatabase db = TestDatabase.create(vertx)) {
      Process server = start(db);
      Eventually.until("the log line " + line, 90_000, () -> log().contains(line));
      server.destroy();
      assertThat(server.waitFor(90, TimeUnit.SECONDS)).isTrue();
      assertThat(server.exitValue()).as(log()).isZero();
      assertThat(log()).contains("shutting down: draining", "stopped");
    }
  }

  /** Starts the server; its output goes to {@code s1.log} in the test's folder ({@link #log()}). */
  private Process start(TestDatabase db) throws IOException {
    int port = TestServer.freePort();
    var config = Json.MAPPER.createObjectNode().put("serverLogin", "s1").put("publicUrl", "ws://127.0.0.1:" + port
        + "/ws");
    config.putObject("http").put("host", "127.0.0.1").put("port", port);
    config.set("db", Json.MAPPER.valueToTree(db.config()));
    config.putObject("egress").putArray("allowCidrs").add("127.0.0.0/8");
    Path file = dir.resolve("s1.json");
    Files.writeString(file, config.toString());
    Path output = dir.resolve("s1.log");
    Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
        System.getProperty("java.class.path"), "org.shine.server.Main", "server", "--config", file.toString())
        .redirectErrorStream(true).redirectOutput(output.toFile()).start();
    started.add(process);
    return process;
  }

  private String log() {
    try {
      return Files.readString(dir.resolve("s1.log"));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }
}
