package org.shine.tools.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.HdrHistogram.Histogram;
import org.shine.server.adapter.HubAdapter;
import org.shine.server.adapter.HubClient;
import org.shine.server.adapter.Inbox;
import org.shine.server.cli.CliContext;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.KeyFile;
import org.shine.tools.probe.JvmProbe;
import org.shine.tools.probe.PgCommits;
import org.shine.tools.probe.ProcessCpu;
import org.shine.tools.support.Progress;
import org.shine.tools.support.Registrar;

/**
 * Hub benchmarks against a running server: {@code hub-throughput} (events/s through the server and the reference
 * adapter end to end) and {@code hub-polls} (many concurrent long polls held: what they cost the server, and the
 * wake-up latency from a send to the poll's 200 beside them).
 */
final class HubBench {
  /** How long polls get to be seen held, and events to arrive, before a measure. */
  private static final long SETTLE_MS = 2_000;
  /** The window over which the CPU of held, idle polls is measured. */
  private static final long IDLE_WINDOW_MS = 10_000;
  private static final int TOKEN_THREADS = 8;

  private HubBench() {
  }

  static int throughput(String ws, int events, CliContext context) throws Exception {
    String http = ws.replaceFirst("^ws", "http").replaceAll("/ws$", "");
    String tag = Long.toString(System.currentTimeMillis() % 1_000_000, 36);
    Vertx vertx = Vertx.vertx();
    try {
      ShineClient admin = ShineClient.connect(vertx, ws).await();
      String serverLogin = admin.serverLogin("bench").await();
      List<Map.Entry<String, String>> routes = List.of(Map.entry(serverLogin, ws));
      KeyFile sender = KeyFile.generate("hs" + tag);
      KeyFile recipient = KeyFile.generate("hr" + tag);
      admin.publishCard("hs" + tag, sender, routes, 1).await();
      admin.publishCard("hr" + tag, recipient, routes, 1).await();
      Path inboxFile = Files.createTempDirectory("hub-bench").resolve("inbox.db");
      AtomicLong processed = new AtomicLong();
      HubAdapter adapter = new HubAdapter(new HubAdapter.Settings(http, null, "hr" + tag, recipient, 25,
          HubAdapter.Settings.defaultDelaysMs(), 60_000, 20, Duration.ZERO), Inbox.open(inboxFile.toString()),
          event -> processed.incrementAndGet());
      adapter.start();
      ShineClient session = ShineClient.connect(vertx, ws).await();
      session.login("hs" + tag, sender).await();
      long start = System.nanoTime();
      for (int i = 0; i < events; i += 64) {
        List<io.vertx.core.Future<JsonNode>> window = new ArrayList<>();
        for (int j = i; j < Math.min(events, i + 64); j++) {
          window.add(session.sendText("hs" + tag, sender, "hr" + tag, "hub " + j));
        }
        io.vertx.core.Future.all(window).await();
      }
      double sent = (System.nanoTime() - start) / 1e9;
      try (Progress progress = Progress.start("hub-throughput: events processed", context, events, processed::get)) {
        while (processed.get() < events) {
          Thread.sleep(20);
        }
      }
      double total = (System.nanoTime() - start) / 1e9;
      adapter.stop();
      System.out.printf(Locale.ROOT, "%d events: sent in %.1f s; received, committed to the adapter's SQLite inbox,"
          + " ACKed and processed in %.1f s: %.0f events/s end to end%n", events, sent, total, events / total);
      return 0;
    } finally {
      vertx.close().await();
    }
  }

  /**
   * {@code hub-polls}: {@code polls} hub users each hold a long poll (renewed as it ends); reports the server's heap
   * after a full GC, fds and CPU with them vs before (with {@code serverPid}), the heap histogram's growth per poll
   * ({@code top} classes), and the wake-up latency of {@code wakes} events, first with only those users polling, then
   * beside all of them.
   */
  static int polls(String ws, int polls, int wakes, Long serverPid, String dbName, int top, CliContext context)
      throws Exception {
    String http = ws.replaceFirst("^ws", "http").replaceAll("/ws$", "");
    String tag = Long.toString(System.currentTimeMillis() % 1_000_000, 36);
    int woken = Math.min(wakes, polls);
    Vertx vertx = Vertx.vertx();
    PgCommits commits = PgCommits.of(vertx, dbName == null ? List.of() : List.of(dbName));
    try {
      ShineClient admin = ShineClient.connect(vertx, ws).await();
      String serverLogin = admin.serverLogin("bench").await();
      admin.close();
      List<Map.Entry<String, String>> routes = List.of(Map.entry(serverLogin, ws));
      KeyFile sender = KeyFile.generate("ps" + tag);
      List<KeyFile> keys = IntStream.range(0, polls).parallel().mapToObj(i -> KeyFile.generate("pr" + tag + "-" + i))
          .toList();
      System.out.printf(Locale.ROOT, "registering %d hub users...%n", polls);
      AtomicLong registered = new AtomicLong();
      try (Progress progress = Progress.start("hub-polls: users registered", context, polls, registered::get);
          Registrar registrar = new Registrar(vertx)) {
        registrar.publish("ps" + tag, sender, routes).await();
        registrar.publishAll(keys, routes, registered);
      }
      List<String> tokens = tokens(http, keys, context);
      ShineClient session = ShineClient.connect(vertx, ws).await();
      session.login("ps" + tag, sender).await();

      JvmProbe.Snapshot before = JvmProbe.Snapshot.of(serverPid, top > 0);
      System.out.println("server before the polls: " + before.describe());
      try (HubPollLoops loops = new HubPollLoops(vertx, http + "/hub/v1", polls)) {
        for (int i = 0; i < woken; i++) {
          loops.start(keys.get(i).login().orElseThrow(), tokens.get(i));
        }
        Histogram alone = wake(session, sender, keys, woken, loops, "ps" + tag);
        System.out.printf(Locale.ROOT, "%d polls held: woken %d (send → the poll's 200, send included): %s%n",
            loops.held.get(), alone.getTotalCount(), percentiles(alone));

        System.out.printf(Locale.ROOT, "opening %d long polls (waitS=%d, each renewed as it ends)...%n", polls,
            HubPollLoops.WAIT_S);
        for (int i = woken; i < polls; i++) {
          loops.start(keys.get(i).login().orElseThrow(), tokens.get(i));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (loops.held.get() < polls && System.nanoTime() < deadline) {
          Thread.sleep(100);
        }
        Thread.sleep(SETTLE_MS);
        ProcessCpu cpu = new ProcessCpu(serverPid == null ? List.of() : List.of("server=" + serverPid),
            dbName == null ? List.of() : List.of(dbName));
        Map<String, Double> cpuStart = cpu.sample();
        Map<String, Long> commitsStart = commits.sample().await();
        Thread.sleep(IDLE_WINDOW_MS);
        Map<String, Double> cpuEnd = cpu.sample();
        Map<String, Long> commitsEnd = commits.sample().await();
        long held = loops.held.get();
        System.out.printf(Locale.ROOT, "holding %d polls, over %d s with no event:%n", held, IDLE_WINDOW_MS / 1000);
        System.out.print(cpu.report(cpuStart, cpuEnd, IDLE_WINDOW_MS / 1000.0, 0, "poll"));
        commitsEnd.forEach((db, n) -> System.out.printf(Locale.ROOT, "  transactions of %s: %.0f/s%n", db,
            (n - commitsStart.getOrDefault(db, n)) * 1000.0 / IDLE_WINDOW_MS));
        JvmProbe.Snapshot holding = JvmProbe.Snapshot.of(serverPid, top > 0);
        System.out.printf(Locale.ROOT, "server holding %d long polls: %s%n", loops.held.get(), holding.describe());
        double heapPerPoll = (holding.heapKb() - before.heapKb()) / (double) polls;
        double fdsPerPoll = (holding.fds() - before.fds()) / (double) polls;
        if (serverPid != null) {
          System.out.printf(Locale.ROOT, "per poll: %.1f KiB of heap after a full GC, %.2f fds, %.1f KiB of RSS%n",
              heapPerPoll, fdsPerPoll, (holding.rssKb() - before.rssKb()) / (double) polls);
        }
        Histogram beside = wake(session, sender, keys, woken, loops, "ps" + tag);
        System.out.printf(Locale.ROOT, "%d polls held: woken %d: %s%n", loops.held.get(), beside.getTotalCount(),
            percentiles(beside));
        if (top > 0 && !holding.histogram().isEmpty()) {
          System.out.printf(Locale.ROOT, "heap histogram, growth per poll (top %d classes by bytes):%n", top);
          JvmProbe.growthLines(JvmProbe.growth(before.histogram(), holding.histogram(), top), polls)
              .forEach(System.out::println);
        }
        double idleServerPct = 100 * (cpuEnd.getOrDefault("server", 0.0) - cpuStart.getOrDefault("server", 0.0))
            / IDLE_WINDOW_MS;
        System.out.printf(Locale.ROOT, "RESULT polls=%d held=%d errors=%d heap_kib_per_poll=%.1f fds_per_poll=%.2f"
                + " heap_before_kib=%d heap_holding_kib=%d idle_server_cpu_pct=%.0f wake_alone_p50_ms=%.1f"
                + " wake_alone_p99_ms=%.1f wake_beside_p50_ms=%.1f wake_beside_p99_ms=%.1f%n", polls, held,
            loops.errors.get(), heapPerPoll, fdsPerPoll, before.heapKb(), holding.heapKb(), idleServerPct,
            alone.getValueAtPercentile(50) / 1e3, alone.getValueAtPercentile(99) / 1e3,
            beside.getValueAtPercentile(50) / 1e3, beside.getValueAtPercentile(99) / 1e3);
      }
      session.close();
      return 0;
    } finally {
      commits.close();
      vertx.close().await();
    }
  }

  /** Sends one message to each of the first {@code count} users, 10 ms apart, and waits for their polls' 200s. */
  private static Histogram wake(ShineClient session, KeyFile sender, List<KeyFile> keys, int count,
      HubPollLoops loops, String from) throws InterruptedException {
    Thread.sleep(SETTLE_MS);
    loops.takeWoken();
    for (int i = 0; i < count; i++) {
      String login = keys.get(i).login().orElseThrow();
      loops.sending(login);
      session.sendText(from, sender, login, "wake " + i).await();
      Thread.sleep(10);
    }
    Thread.sleep(SETTLE_MS);
    return loops.takeWoken();
  }

  /** An access token for each user ({@link HubClient#login}), {@value #TOKEN_THREADS} at a time. */
  private static List<String> tokens(String http, List<KeyFile> keys, CliContext context) throws Exception {
    HubClient hub = new HubClient(http);
    AtomicLong issued = new AtomicLong();
    ForkJoinPool pool = new ForkJoinPool(TOKEN_THREADS);
    try (Progress progress = Progress.start("hub-polls: tokens issued", context, keys.size(), issued::get)) {
      return pool.submit(() -> keys.parallelStream().map(key -> {
        try {
          String token = hub.login(key.login().orElseThrow(), key, null).accessToken();
          issued.incrementAndGet();
          return token;
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }).toList()).get();
    } finally {
      pool.shutdown();
    }
  }

  private static String percentiles(Histogram micros) {
    return String.format(Locale.ROOT, "p50 %.1f ms, p99 %.1f ms, max %.1f ms", micros.getValueAtPercentile(50) / 1e3,
        micros.getValueAtPercentile(99) / 1e3, micros.getMaxValue() / 1e3);
  }
}
