package org.shine.server.cli;

import io.vertx.core.Vertx;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import sun.misc.Signal;

/**
 * The fault suite's own parts ({@code scripts/chaos.sh} drives them): {@code chaos load}, the load of a scenario
 * and its ledger ({@link ChaosLoad}), and {@code chaos proxy}, a TCP proxy on loopback that cuts connections and
 * delays bytes ({@link ChaosProxy}).
 */
public final class ChaosCommand {
  static final String USAGE = String.join("\n",
      ChaosLoad.USAGE,
      "chaos proxy --listen PORT --target HOST:PORT [--drop-every-ms M] [--max-delay-ms D] [--seed S]",
      "       relays 127.0.0.1:PORT to HOST:PORT (loopback only); holds each chunk of bytes back 0..D ms (default",
      "       0, order kept) and every M ms (default 0 = never) cuts one open connection picked at random; runs",
      "       until SIGTERM/SIGINT, printing a line per cut");

  private ChaosCommand() {
  }

  public static int run(String[] args) {
    if (args.length == 0 || args[0].equals("help")) {
      System.out.println(USAGE);
      return args.length == 0 ? 2 : 0;
    }
    return switch (args[0]) {
      case "load" -> ChaosLoad.run(Args.parse(args, 1, ChaosLoad.OPTIONS));
      case "proxy" -> proxy(Args.parse(args, 1, Set.of("listen", "target", "drop-every-ms", "max-delay-ms",
          "seed")));
      default -> throw new Args.UsageException("unknown chaos command " + args[0] + "\n" + USAGE);
    };
  }

  private static int proxy(Args options) {
    String target = options.required("target");
    int colon = target.lastIndexOf(':');
    if (colon <= 0) {
      throw new Args.UsageException("--target takes HOST:PORT: " + target);
    }
    int targetPort;
    try {
      targetPort = Integer.parseInt(target.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new Args.UsageException("--target takes HOST:PORT: " + target);
    }
    Vertx vertx = Vertx.vertx();
    ChaosProxy proxy = new ChaosProxy(vertx, (int) options.longValue("listen", 0), target.substring(0, colon),
        targetPort, options.longValue("drop-every-ms", 0), options.longValue("max-delay-ms", 0),
        options.longValue("seed", System.nanoTime()));
    int port = proxy.start().await();
    System.out.printf("CHAOS proxy listening on 127.0.0.1:%d, relaying to %s%n", port, target);
    CountDownLatch stopped = new CountDownLatch(1);
    Signal.handle(new Signal("TERM"), signal -> stopped.countDown());
    Signal.handle(new Signal("INT"), signal -> stopped.countDown());
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    System.out.printf("CHAOS proxy stopped: %d connections accepted, %d cut%n", proxy.accepted(), proxy.dropped());
    proxy.stop().await();
    vertx.close().await();
    return 0;
  }
}
