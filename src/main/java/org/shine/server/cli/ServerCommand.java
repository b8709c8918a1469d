package org.shine.server.cli;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.Callable;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.shine.server.config.AppConfig;
import org.shine.server.config.ConfigException;
import org.shine.server.config.ConfigLoader;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.node.OutOfMemoryHalt;
import org.shine.server.node.ServerNode;
import org.shine.server.node.ShineServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code server --config FILE}: runs one node until SIGTERM/SIGINT, then drains and exits 0. */
@Command(name = "server", mixinStandardHelpOptions = true,
    description = "Run an access server node (PROTOCOL §11) until SIGTERM or Ctrl-C, then drain and exit 0.")
final class ServerCommand implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger(ServerCommand.class);
  private static final long SHUTDOWN_LIMIT_S = 30;

  @Option(names = "--config", required = true, paramLabel = "FILE.json",
      description = "the server's config; every key is optional, an unknown key is an error (exit code 2)")
  private Path configFile;

  private final CliContext context;

  ServerCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    OutOfMemoryHalt.installDefault();
    AppConfig config = ConfigLoader.load(configFile, context.env());
    ShineMetrics metrics = ShineMetrics.forNode(config.serverLogin(), config.metrics().enabled());
    Vertx vertx;
    try {
      vertx = ServerNode.vertx(config, metrics).await();
    } catch (ConfigException e) {
      throw e;
    } catch (RuntimeException e) {
      LOG.error("cannot start the node: {}", e.toString());
      return 1;
    }
    ShineServer server = new ShineServer(vertx, config, clock(config), metrics);
    // SIGTERM and SIGINT start the JVM's shutdown, which runs this hook: drain, then end with 0 (a drained stop is a
    // clean exit, not the 143 of a process killed by a signal); Runtime.halt, since exit() is not allowed in a hook.
    // It is in place before the start, so a signal while the node starts (or just after "is up") waits for the
    // start and then drains, instead of killing a half-started node.
    Promise<Boolean> started = Promise.promise();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> shutDown(vertx, server, started.future()), "shutdown"));
    LOG.info("starting {}: SIGTERM or Ctrl-C from now on drains and exits 0", config.serverLogin());
    try {
      server.start().await();
      started.complete(true);
    } catch (RuntimeException e) {
      started.complete(false);
      vertx.close().await();
      if (e instanceof ConfigException) {
        // a config problem found at start (a key file, a TLS file): exit code 2 with the key named, as at parse
        throw e;
      }
      LOG.error("server failed to start: {}", e.getMessage() == null ? e.toString() : e.getMessage());
      return 1;
    }
    try {
      // parked until the hook halts the JVM
      Thread.currentThread().join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return 0;
  }

  /**
   * The shutdown hook: waits for the start to end; a node that started is drained and the JVM halts with 0; one that
   * failed to start was closed by {@link #call()}, whose exit code stands.
   */
  private static void shutDown(Vertx vertx, ShineServer server, Future<Boolean> started) {
    boolean running;
    try {
      running = started.await(SHUTDOWN_LIMIT_S, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.warn("the node did not finish starting within {} s; closing it", SHUTDOWN_LIMIT_S);
      running = true;
    }
    if (!running) {
      return;
    }
    LOG.info("shutting down: draining in-flight requests");
    try {
      // two awaits: a continuation of stop() would run on an event loop that vertx.close() terminates
      server.stop().await(SHUTDOWN_LIMIT_S, TimeUnit.SECONDS);
      vertx.close().await(SHUTDOWN_LIMIT_S, TimeUnit.SECONDS);
      LOG.info("stopped");
    } catch (Exception e) {
      LOG.warn("shutdown did not finish cleanly: {}", e.toString());
    }
    Runtime.getRuntime().halt(0);
  }

  /** The system clock, or with {@code testing.clockOffsetMs} (the fault suite's hook) that far off it. */
  private static Clock clock(AppConfig config) {
    long offsetMs = config.testing().clockOffsetMs();
    if (offsetMs == 0) {
      return Clock.systemUTC();
    }
    LOG.warn("testing.clockOffsetMs is set: this node's clock runs {} ms off the system clock (a test hook)",
        offsetMs);
    return Clock.offset(Clock.systemUTC(), Duration.ofMillis(offsetMs));
  }
}
