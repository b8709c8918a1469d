package org.shine.tools.chaos;

import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.shine.server.cli.CliFailure;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Option;

/**
 * The fault suite's own parts ({@code scripts/chaos.sh} drives them): {@code chaos load}, the load of a scenario
 * and its ledger ({@link ChaosLoad}), and {@code chaos proxy}, a TCP proxy on loopback that cuts connections and
 * delays bytes ({@link ChaosProxy}).
 */
@Command(name = "chaos", mixinStandardHelpOptions = true,
    description = "The fault suite's load, ledger and proxy (scripts/chaos.sh runs them).",
    subcommands = {ChaosCommand.Load.class, ChaosCommand.Proxy.class, HelpCommand.class})
public final class ChaosCommand {
  private ChaosCommand() {
  }

  @Command(name = "load", mixinStandardHelpOptions = true, description = {
      "The load of one fault scenario and its ledger: N sender/recipient pairs of fresh users, R pairs/s in all"
          + " with at most W unsettled per sender for S seconds, then T seconds to settle; exit 0 only when nothing"
          + " was lost, duplicated, left unanswered or left unsettled.",
      "NODES: a server's WebSocket URL, or the URLs of its nodes separated by commas (clients use them all; the"
          + " first is the route in the users' cards unless --route names another for that serverLogin)."})
  static final class Load implements Callable<Integer> {
    @Option(names = "--sender-server", required = true, paramLabel = "NODES",
        description = "the sender's servers (once or twice)")
    List<String> senderServers;

    @Option(names = "--recipient-server", required = true, paramLabel = "NODES",
        description = "the recipient's servers (once or twice)")
    List<String> recipientServers;

    @Option(names = "--scenario", defaultValue = "chaos", paramLabel = "NAME", description = "its name in the ledger")
    String scenario;

    @Option(names = "--users", defaultValue = "10", paramLabel = "N", description = "sender/recipient pairs (10)")
    int users;

    @Option(names = "--rate", defaultValue = "100", paramLabel = "R", description = "pairs/s in all (100)")
    long rate;

    @Option(names = "--window", defaultValue = "10", paramLabel = "W", description = "unsettled per sender (10)")
    int window;

    @Option(names = "--seconds", defaultValue = "10", paramLabel = "S", description = "seconds of load (10)")
    int seconds;

    @Option(names = "--settle-s", defaultValue = "60", paramLabel = "T", description = "seconds to settle (60)")
    int settleS;

    @Option(names = "--both-senders", defaultValue = "off", paramLabel = "on|off",
        description = "on: every pair is sent on both sender servers at once")
    String bothSenders;

    @Option(names = "--route", paramLabel = "LOGIN=URL", description = "the route a serverLogin's cards name")
    List<String> routes = List.of();

    @Option(names = "--request-timeout-ms", defaultValue = "10000", paramLabel = "MS",
        description = "an answer later than this is resent (10000)")
    long requestTimeoutMs;

    @Option(names = "--tag", paramLabel = "T", description = "1-12 lower-case letters or digits in the users' logins")
    String tag;

    @Option(names = "--faults-done", paramLabel = "FILE",
        description = "the settle time (and the time for resends) counts from when FILE exists")
    Path faultsDone;

    @Override
    public Integer call() {
      return ChaosLoad.run(ChaosSettings.of(scenario, senderServers, recipientServers, routes, users, rate,
          window, seconds, settleS, bothSenders, requestTimeoutMs,
          tag != null ? tag : Long.toString(System.currentTimeMillis() % 1_000_000, 36), faultsDone));
    }
  }

  @Command(name = "proxy", mixinStandardHelpOptions = true, description = {
      "Relays 127.0.0.1:PORT to HOST:PORT (loopback only; several --target: the first that takes the connection);"
          + " holds each chunk of bytes back 0..D ms (order kept) and every M ms cuts one open connection picked at"
          + " random; runs until SIGTERM or Ctrl-C, printing a line per cut."})
  static final class Proxy implements Callable<Integer> {
    @Option(names = "--listen", defaultValue = "0", paramLabel = "PORT", description = "0: the system picks")
    int listen;

    @Option(names = "--target", required = true, paramLabel = "HOST:PORT",
        description = "where to relay; repeat it for fallbacks, tried in order")
    List<String> targets;

    @Option(names = "--drop-every-ms", defaultValue = "0", paramLabel = "M", description = "0: never (0)")
    long dropEveryMs;

    @Option(names = "--max-delay-ms", defaultValue = "0", paramLabel = "D", description = "(0)")
    long maxDelayMs;

    @Option(names = "--seed", paramLabel = "S", description = "of the random cuts and delays")
    Long seed;

    @Override
    public Integer call() {
      List<ChaosProxy.Target> parsed = targets.stream().map(ChaosProxy.Target::parse).toList();
      Vertx vertx = Vertx.vertx();
      ChaosProxy proxy = new ChaosProxy(vertx, listen, parsed, dropEveryMs, maxDelayMs,
          seed != null ? seed : System.nanoTime());
      int port = proxy.start().await();
      System.out.printf("CHAOS proxy listening on 127.0.0.1:%d, relaying to %s%n", port,
          parsed.stream().map(ChaosProxy.Target::toString).collect(Collectors.joining(" or ")));
      // SIGTERM and SIGINT run the JVM's shutdown hooks: report and close, then the JVM ends
      CountDownLatch closed = new CountDownLatch(1);
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        System.out.printf("CHAOS proxy stopped: %d connections accepted, %d cut%n", proxy.accepted(),
            proxy.dropped());
        try {
          proxy.stop().await(5, TimeUnit.SECONDS);
          vertx.close().await(5, TimeUnit.SECONDS);
        } catch (Exception e) {
          System.err.println("CHAOS proxy did not close cleanly: " + e);
        }
        closed.countDown();
      }, "proxy-shutdown"));
      try {
        closed.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return 0;
    }
  }
}
