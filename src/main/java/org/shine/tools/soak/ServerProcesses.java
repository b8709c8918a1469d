package org.shine.tools.soak;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.shine.server.cli.CliFailure;

/**
 * The four server processes of a soak as the run directory knows them: {@code sN.pid} (which this class keeps
 * current when it starts one), {@code sN.json}, {@code sN.log}; starting a server from the product's jar and waiting
 * for its {@code /health}.
 */
final class ServerProcesses {
  private static final long HEALTHY_WITHIN_MS = 120_000;

  private final SoakSettings settings;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();

  ServerProcesses(SoakSettings settings) {
    this.settings = settings;
  }

  /** The process of server {@code name} now, or -1 when its pid file is missing or unreadable. */
  long pidOf(String name) {
    try {
      return Long.parseLong(Files.readString(settings.runDir().resolve(name + ".pid")).trim());
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
  }

  /** Starts {@code java [--java-opts] -jar SERVER_JAR server --config sN.json}, its output appended to sN.log. */
  void start(String name) {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(settings.javaOpts());
    command.addAll(List.of("-jar", settings.serverJar().toString(), "server", "--config",
        settings.runDir().resolve(name + ".json").toString()));
    try {
      Process process = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(settings.runDir().resolve(name + ".log").toFile()))
          .start();
      Files.writeString(settings.runDir().resolve(name + ".pid"), process.pid() + "\n");
    } catch (IOException e) {
      throw new IllegalStateException("could not start " + name, e);
    }
  }

  /** Until server {@code name} answers {@code GET /health} with 200, at most two minutes (then a line says so). */
  void awaitHealthy(String name) {
    URI health = URI.create(SoakSettings.httpOf(settings.servers().get(name)) + "/health");
    long deadline = System.currentTimeMillis() + HEALTHY_WITHIN_MS;
    while (System.currentTimeMillis() < deadline) {
      try {
        if (http.send(HttpRequest.newBuilder(health).timeout(Duration.ofSeconds(3)).GET().build(),
            HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      SoakThreads.sleepQuietly(500);
    }
    System.out.println(name + " is not healthy 120 s after its start");
  }

  /**
   * The product's jar beside the one this runs from ({@code target/shine-tools.jar} → {@code
   * target/shine-server.jar}; from {@code target/classes}, the same): the tools' jar has no {@code server} command.
   */
  static Path siblingServerJar() {
    try {
      Path own = Path.of(ServerProcesses.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      Path jar = own.getParent().resolve("shine-server.jar");
      if (!Files.isRegularFile(jar)) {
        throw CliFailure.usage("no " + jar + " to restart servers from; name it with --server-jar");
      }
      return jar;
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }
}
