package org.shine.tools.bench;

import io.vertx.core.Vertx;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.HdrHistogram.Histogram;
import org.shine.server.cli.CliContext;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.KeyFile;
import org.shine.tools.probe.JvmProbe;
import org.shine.tools.probe.ProcessCpu;
import org.shine.tools.support.Progress;
import org.shine.tools.support.Registrar;
import picocli.CommandLine.Option;

/**
 * {@code bench sessions} (issue 18, "scale a node holds"): N users registered on one server, then N WebSocket sessions
 * connected and logged in, which then stay idle. Measures what a held session costs the server — heap after a full GC
 * and open descriptors before and with the sessions (with {@code --server-pid}), the classes that grew (the heap
 * histogram's difference divided by N) — how long the connects and the logins took (and the CPU they cost the
 * server, PostgreSQL and this load generator), and whether a GetUserCard round trip beside the sessions is as fast as
 * without them. Ends with one {@code RESULT key=value ...} line.
 */
final class SessionsBench {
  static final String DESCRIPTION = "N idle logged-in WebSocket sessions on one server: heap per session after a full"
      + " GC, descriptors, the heap histogram's growth per session, time and CPU to connect and log them in, a"
      + " GetUserCard round trip beside them vs without; ends with one RESULT line.";
  /** Logins GetUserCard asks for, in turn (all of them cached by the server after a first look). */
  private static final int PROBED_LOGINS = 100;
  /** How long the server gets to see the sessions' closes before its heap is read again. */
  private static final long CLOSE_SETTLE_MS = 2_000;

  /** The command line of {@code bench sessions}. */
  static final class Options {
    @Option(names = "--server", required = true, paramLabel = "URL", description = "ws://host:port/ws")
    String server;

    @Option(names = "--sessions", defaultValue = "10000", paramLabel = "N", description = "sessions held")
    int sessions;

    @Option(names = "--server-pid", paramLabel = "PID", description = "the server process: heap, histogram, fds, CPU")
    Long serverPid;

    @Option(names = "--db-name", paramLabel = "NAME", description = "the server's database (its backends' CPU)")
    String dbName;

    @Option(names = "--per-address", defaultValue = "1000", paramLabel = "K",
        description = "sessions from one loopback source address (127.3.x.y); keep it under"
            + " limits.maxConnectionsPerIp when that is set")
    int perAddress;

    @Option(names = "--in-flight", defaultValue = "200", paramLabel = "C",
        description = "connects, and logins, in flight at a time")
    int inFlight;

    @Option(names = "--probes", defaultValue = "2000", paramLabel = "P",
        description = "GetUserCard round trips timed without and beside the sessions (after as many unmeasured)")
    int probes;

    @Option(names = "--top", defaultValue = "20", paramLabel = "T",
        description = "classes of the heap histogram's growth shown (0: no histogram)")
    int top;

    @Option(names = "--hold-s", defaultValue = "0", paramLabel = "S",
        description = "after the measures, hold the sessions S seconds more (for another load beside them)")
    int holdS;

    @Option(names = "--tag", paramLabel = "TAG", description = "login prefix (default: random)")
    String tag;
  }

  private SessionsBench() {
  }

  static int run(Options o, CliContext context) throws Exception {
    String tag = o.tag != null ? o.tag : "i" + Long.toString(ThreadLocalRandom.current().nextLong(36L * 36 * 36 * 36),
        36);
    Vertx vertx = Vertx.vertx();
    try {
      return run(vertx, o, tag, context);
    } finally {
      vertx.close().await();
    }
  }

  private static int run(Vertx vertx, Options o, String tag, CliContext context) throws Exception {
    ShineClient admin = ShineClient.connect(vertx, o.server).await();
    String serverLogin = admin.serverLogin("bench").await();
    admin.close();
    List<Map.Entry<String, String>> routes = List.of(Map.entry(serverLogin, o.server));
    System.out.printf(Locale.ROOT, "generating %d keys...%n", o.sessions + 1);
    // the last one is the user of the probing session, which is not one of the N
    List<KeyFile> keys = IntStream.rangeClosed(0, o.sessions).parallel()
        .mapToObj(i -> KeyFile.generate(tag + "-" + i)).toList();
    register(vertx, keys, routes, context);
    ShineClient probe = ShineClient.connect(vertx, o.server).await();
    probe.login(tag + "-" + o.sessions, keys.get(o.sessions)).await();

    ProcessCpu cpu = new ProcessCpu(o.serverPid == null ? List.of() : List.of("server=" + o.serverPid),
        o.dbName == null ? List.of() : List.of(o.dbName));
    Histogram alone = probes(probe, keys, o.probes);
    System.out.println("GetUserCard round trip, no other session: " + percentiles(alone));
    JvmProbe.Snapshot before = JvmProbe.Snapshot.of(o.serverPid, o.top > 0);
    System.out.println("server before the sessions: " + before.describe());

    try (IdleSessions held = new IdleSessions(vertx, o.server, o.perAddress)) {
      System.out.printf(Locale.ROOT, "connecting and logging in %d sessions (WebSocket handshake, AuthChallenge,"
          + " AuthLogin), %d in flight...%n", o.sessions, o.inFlight);
      Histogram connectTimes = IdleSessions.micros();
      Histogram loginTimes = IdleSessions.micros();
      AtomicLong done = new AtomicLong();
      Map<String, Double> cpuStart = cpu.sample();
      long start = System.nanoTime();
      Map<String, Integer> failures;
      try (Progress progress = Progress.start("bench sessions: logged in", context, o.sessions, done::get)) {
        failures = held.open(o.sessions, o.inFlight, (session, i) -> session.login(tag + "-" + i, keys.get(i)),
            connectTimes, loginTimes, done);
      }
      double loginSeconds = (System.nanoTime() - start) / 1e9;
      Map<String, Double> cpuEnd = cpu.sample();
      int failed = failures.values().stream().mapToInt(Integer::intValue).sum();
      System.out.printf(Locale.ROOT, "%d sessions connected and logged in in %.2f s (%.0f/s) from %d source"
              + " addresses, %d failed %s%n", o.sessions - failed, loginSeconds, o.sessions / loginSeconds,
          held.addresses(), failed, failures.isEmpty() ? "" : failures);
      System.out.println("  each connect (TCP + WebSocket handshake): " + percentiles(connectTimes));
      System.out.println("  each login (AuthChallenge + AuthLogin): " + percentiles(loginTimes));
      System.out.print(cpu.report(cpuStart, cpuEnd, loginSeconds, o.sessions, "session"));
      int opened = held.size();
      JvmProbe.Snapshot holding = JvmProbe.Snapshot.of(o.serverPid, o.top > 0);
      Histogram beside = probes(probe, keys, o.probes);
      long open = opened - held.closed.get();
      System.out.printf(Locale.ROOT, "server holding %d idle sessions: %s%n", open, holding.describe());
      double heapPerSession = (holding.heapKb() - before.heapKb()) / (double) opened;
      double fdsPerSession = (holding.fds() - before.fds()) / (double) opened;
      if (o.serverPid != null) {
        System.out.printf(Locale.ROOT, "per session: %.1f KiB of heap after a full GC, %.2f fds, %.1f KiB of RSS%n",
            heapPerSession, fdsPerSession, (holding.rssKb() - before.rssKb()) / (double) opened);
      }
      System.out.println("GetUserCard round trip beside them: " + percentiles(beside));
      if (o.top > 0 && !holding.histogram().isEmpty()) {
        System.out.printf(Locale.ROOT, "heap histogram, growth per session (top %d classes by bytes):%n", o.top);
        JvmProbe.growthLines(JvmProbe.growth(before.histogram(), holding.histogram(), o.top), opened)
            .forEach(System.out::println);
      }
      if (o.holdS > 0) {
        System.out.printf(Locale.ROOT, "holding %d sessions for %d s...%n", opened - held.closed.get(), o.holdS);
        Thread.sleep(o.holdS * 1000L);
      }
      held.close();
      Thread.sleep(CLOSE_SETTLE_MS);
      JvmProbe.Snapshot after = JvmProbe.Snapshot.of(o.serverPid, false);
      System.out.println("server after the sessions closed: " + after.describe());
      System.out.printf(Locale.ROOT, "RESULT sessions=%d open=%d login_failed=%d heap_kib_per_session=%.1f"
              + " fds_per_session=%.2f heap_before_kib=%d heap_holding_kib=%d heap_after_kib=%d login_s=%.2f"
              + " connect_p50_ms=%.1f connect_p99_ms=%.1f login_p50_ms=%.1f login_p99_ms=%.1f"
              + " card_alone_p50_ms=%.2f card_alone_p99_ms=%.2f"
              + " card_beside_p50_ms=%.2f card_beside_p99_ms=%.2f%n", opened, open, failed, heapPerSession,
          fdsPerSession, before.heapKb(), holding.heapKb(), after.heapKb(), loginSeconds,
          connectTimes.getValueAtPercentile(50) / 1e3, connectTimes.getValueAtPercentile(99) / 1e3,
          loginTimes.getValueAtPercentile(50) / 1e3, loginTimes.getValueAtPercentile(99) / 1e3,
          alone.getValueAtPercentile(50) / 1e3, alone.getValueAtPercentile(99) / 1e3,
          beside.getValueAtPercentile(50) / 1e3, beside.getValueAtPercentile(99) / 1e3);
      return failed == 0 && open == opened ? 0 : 1;
    } finally {
      probe.close();
    }
  }

  /** Publishes every user's card on the server ({@link Registrar}: source addresses in turn). */
  private static void register(Vertx vertx, List<KeyFile> keys, List<Map.Entry<String, String>> routes,
      CliContext context) {
    System.out.printf(Locale.ROOT, "registering %d users...%n", keys.size());
    AtomicLong registered = new AtomicLong();
    try (Progress progress = Progress.start("bench sessions: users registered", context, keys.size(),
        registered::get); Registrar registrar = new Registrar(vertx)) {
      registrar.publishAll(keys, routes, registered);
    }
  }

  /** {@code count} GetUserCard round trips one after another, after as many unmeasured; microseconds. */
  private static Histogram probes(ShineClient client, List<KeyFile> keys, int count) {
    Histogram took = IdleSessions.micros();
    int logins = Math.min(PROBED_LOGINS, keys.size());
    for (int i = 0; i < 2 * count; i++) {
      String login = keys.get(i % logins).login().orElseThrow();
      long start = System.nanoTime();
      client.request("GetUserCard", ShineClient.object().put("login", login)).await();
      if (i >= count) {
        took.recordValue(Math.max(1, (System.nanoTime() - start) / 1_000));
      }
    }
    return took;
  }

  private static String percentiles(Histogram micros) {
    return String.format(Locale.ROOT, "p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d)", micros.getValueAtPercentile(50)
        / 1e3, micros.getValueAtPercentile(99) / 1e3, micros.getMaxValue() / 1e3, micros.getTotalCount());
  }
}
