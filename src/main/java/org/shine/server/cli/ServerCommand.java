package org.shine.server.cli;

import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.shine.server.config.AppConfig;
import org.shine.server.config.ConfigException;
import org.shine.server.config.ConfigLoader;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.node.ServerNode;
import org.shine.server.node.ShineServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;

/** {@code server --config FILE}: runs one node until SIGTERM/SIGINT, then drains and exits 0. */
public final class ServerCommand {
  private static final Logger LOG = LoggerFactory.getLogger(ServerCommand.class);
  private static final long SHUTDOWN_LIMIT_S = 30;

  private ServerCommand() {
  }

  public static int run(String[] args) {
    Args options = Args.parse(args, 0, Set.of("config"));
    AppConfig config = ConfigLoader.load(Path.of(options.required("config")), System.getenv());
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
    try {
      server.start().await();
    } catch (RuntimeException e) {
      vertx.close().await();
      if (e instanceof ConfigException) {
        // a config problem found at start (a key file, a TLS file): exit code 2 with the key named, as at parse
        throw e;
      }
      LOG.error("server failed to start: {}", e.toString());
      return 1;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runnable shutdown = () -> {
      LOG.info("shutting down: draining in-flight requests");
      try {
        // two awaits: a continuation of stop() would run on an event loop that vertx.close() terminates
        server.stop().await(SHUTDOWN_LIMIT_S, TimeUnit.SECONDS);
        vertx.close().await(SHUTDOWN_LIMIT_S, TimeUnit.SECONDS);
      } catch (Exception e) {
        LOG.warn("shutdown did not finish cleanly: {}", e.toString());
      }
      stopped.countDown();
    };
    Signal.handle(new Signal("TERM"), signal -> new Thread(shutdown, "shutdown").start());
    Signal.handle(new Signal("INT"), signal -> new Thread(shutdown, "shutdown").start());
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    LOG.info("stopped");
    return 0;
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
