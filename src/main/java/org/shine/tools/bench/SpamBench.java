package org.shine.tools.bench;

import static org.shine.tools.bench.SendReport.ms;
import static org.shine.tools.bench.SendBench.sleepUntil;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.dm.KeyFile;
import org.shine.tools.probe.MetricsScrape;
import org.shine.tools.probe.ProcessCpu;
import org.shine.tools.support.Registrar;
import picocli.CommandLine.Option;


/**
 * {@code bench spam} (issue 16, PROTOCOL §13 open-op limits): one honest sender on {@code --server} sends an open loop
 * of pairs to one recipient on {@code --recipient-server}, while a flood of {@code ReceiveIncomingMessage} goes
 * straight to the recipient's server from logins the spammer registered there itself, each copy validly signed, to
 * other users of that server. Reports the honest pairs' delivered latency (the SendMessagePair answer comes on the
 * first recipient ACK; from the intended send time) beside the flood's answers per second and the CPU of each
 * process. Users are registered by a {@link Registrar}; the flood comes from {@code --spam-addresses} loopback
 * addresses. Ends with one {@code RESULT key=value ...} line.
 */
final class SpamBench {
  static final String DESCRIPTION = "Honest deliveries (an open loop of R pairs/s, sender on --server, recipient on"
      + " --recipient-server) beside a flood of ReceiveIncomingMessage from self-registered logins to the recipient's"
      + " server: delivered latency percentiles, the flood's answers, CPU per process; ends with one RESULT line.";
  private static final long WAIT_CARDS_MS = 60_000;

  /** The command line of {@code bench spam}. */
  static final class Options {
    @Option(names = "--server", required = true, paramLabel = "URL", description = "the honest sender's server")
    String server;

    @Option(names = "--recipient-server", required = true, paramLabel = "URL",
        description = "the honest recipient's server, which the flood targets")
    String recipientServer;

    @Option(names = "--rate", defaultValue = "50", paramLabel = "R", description = "honest pairs per second")
    int rate;

    @Option(names = "--seconds", defaultValue = "20", paramLabel = "S", description = "seconds measured")
    int seconds;

    @Option(names = "--warmup", defaultValue = "5", paramLabel = "S", description = "seconds of warm-up")
    int warmup;

    @Option(names = "--spammers", defaultValue = "50", paramLabel = "N", description = "self-registered logins")
    int spammers;

    @Option(names = "--victims", defaultValue = "20", paramLabel = "N", description = "users the flood writes to")
    int victims;

    @Option(names = "--spam-connections", defaultValue = "8", paramLabel = "C", description = "flood connections")
    int spamConnections;

    @Option(names = "--spam-window", defaultValue = "32", paramLabel = "W",
        description = "flood requests in flight per connection (0: no flood)")
    int spamWindow;

    @Option(names = "--spam-addresses", defaultValue = "1", paramLabel = "A",
        description = "the flood comes from 127.0.0.2 .. 127.0.0.(A+1)")
    int spamAddresses;

    @Option(names = "--spam-pool", defaultValue = "60000", paramLabel = "P",
        description = "copies signed before the run; past them the flood repeats them (identical repeats)")
    int spamPool;

    @Option(names = "--server-pid", paramLabel = "NAME=PID", description = "CPU of that process; repeatable")
    List<String> serverPids = new ArrayList<>();

    @Option(names = "--db-name", paramLabel = "NAME",
        description = "CPU of the PostgreSQL backends serving that database; repeatable")
    List<String> dbNames = new ArrayList<>();

    @Option(names = "--tag", paramLabel = "TAG", description = "login prefix (default: random)")
    String tag;

    @Option(names = "--scenario", defaultValue = "spam", paramLabel = "NAME", description = "names the RESULT line")
    String scenario;
  }

  private SpamBench() {
  }

  static int run(Options options) {
    String tag = options.tag != null ? options.tag : "x" + Long.toString(ThreadLocalRandom.current().nextLong(
        36L * 36 * 36 * 36), 36);
    Vertx vertx = Vertx.vertx();
    try {
      return run(vertx, options, tag);
    } finally {
      vertx.close().await();
    }
  }

  private static int run(Vertx vertx, Options o, String tag) {
    String serverLogin = serverLogin(vertx, o.server);
    String recipientLogin = serverLogin(vertx, o.recipientServer);
    KeyFile alice = KeyFile.generate(tag + "-alice");
    KeyFile bob = KeyFile.generate(tag + "-bob");
    List<KeyFile> spammers = new ArrayList<>();
    List<String> victims = new ArrayList<>();
    System.out.printf(Locale.ROOT, "registering %s-alice on %s, %s-bob, %d victims and %d spammers on %s...%n", tag,
        serverLogin, tag, o.victims, o.spammers, recipientLogin);
    List<Map.Entry<String, String>> here = List.of(Map.entry(serverLogin, o.server));
    List<Map.Entry<String, String>> there = List.of(Map.entry(recipientLogin, o.recipientServer));
    try (Registrar registrar = new Registrar(vertx)) {
      registrar.publish(alice.login().orElseThrow(), alice, here).await();
      registrar.publish(bob.login().orElseThrow(), bob, there).await();
      for (int i = 0; i < o.victims; i++) {
        KeyFile victim = KeyFile.generate(tag + "-v" + i);
        registrar.publish(victim.login().orElseThrow(), victim, there).await();
        victims.add(victim.login().orElseThrow());
      }
      for (int i = 0; i < o.spammers; i++) {
        KeyFile spammer = KeyFile.generate(tag + "-m" + i);
        registrar.publish(spammer.login().orElseThrow(), spammer, there).await();
        spammers.add(spammer);
      }
      registrar.awaitKnown(List.of(o.server, o.recipientServer), WAIT_CARDS_MS);
    }

    System.out.printf(Locale.ROOT, "signing %d flood copies...%n", o.spamWindow == 0 ? 0 : o.spamPool);
    List<String> pool = new ArrayList<>();
    byte[] body = "win a prize".getBytes(StandardCharsets.UTF_8);
    for (int i = 0; o.spamWindow > 0 && i < o.spamPool; i++) {
      KeyFile spammer = spammers.get(i % spammers.size());
      pool.add(Base64.getEncoder().encodeToString(ShineClient.signPair(spammer.login().orElseThrow(),
          spammer, victims.get(i % victims.size()), System.currentTimeMillis(), ShineClient.randomNonce(), 0, body)
          .incoming().bytes()));
    }

    ShineClient sender = ShineClient.connect(vertx, o.server).await();
    sender.login(alice.login().orElseThrow(), alice).await();
    List<ShineClient> flood = new ArrayList<>();
    for (int i = 0; o.spamWindow > 0 && i < o.spamConnections; i++) {
      flood.add(ShineClient.connectFrom(vertx, o.recipientServer, "127.0.0." + (2 + i % o.spamAddresses)).await());
    }
    ProcessCpu cpu = new ProcessCpu(o.serverPids, o.dbNames);
    MetricsScrape scrape = new MetricsScrape(vertx);
    Run run = new Run(System.nanoTime() + TimeUnit.SECONDS.toNanos(o.warmup),
        System.nanoTime() + TimeUnit.SECONDS.toNanos(o.warmup + o.seconds));
    System.out.printf(Locale.ROOT, "running: %d s warm-up, %d s measured; honest %d pairs/s, flood %d × %d in"
        + " flight from %d address(es)...%n", o.warmup, o.seconds, o.rate, flood.size(), o.spamWindow,
        o.spamAddresses);
    AtomicInteger next = new AtomicInteger();
    for (ShineClient client : flood) {
      for (int i = 0; i < o.spamWindow; i++) {
        spam(client, pool, next, run);
      }
    }
    Map<String, Double> cpuBefore = null;
    Future<Map<String, Double>> countersBefore = null;
    long interval = 1_000_000_000L / o.rate;
    long start = System.nanoTime();
    for (long i = 0; ; i++) {
      long due = start + i * interval;
      if (due >= run.endNanos) {
        break;
      }
      if (cpuBefore == null && due >= run.measureFromNanos) {
        cpuBefore = cpu.sample();
        countersBefore = scrape.counters(o.recipientServer);
      }
      sleepUntil(due);
      honest(sender, alice, bob.login().orElseThrow(), due, run);
    }
    Map<String, Double> cpuAfter = cpu.sample();
    Map<String, Double> countersAfter = scrape.counters(o.recipientServer).await();
    run.stopped = true;
    sleepUntil(System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
    double verified = verifiedMessages(countersAfter) - verifiedMessages(countersBefore.await());
    scrape.close();
    return report(o, tag, run, cpu, cpuBefore, cpuAfter, verified, pool.size());
  }

  private static void honest(ShineClient sender, KeyFile alice, String bob, long dueNanos, Run run) {
    boolean measured = dueNanos >= run.measureFromNanos;
    sender.sendPair(ShineClient.signPair(alice.login().orElseThrow(), alice, bob, System.currentTimeMillis(),
        ShineClient.randomNonce(), 0, "hello".getBytes(StandardCharsets.UTF_8))).onComplete(ar -> {
          if (!measured) {
            return;
          }
          String outcome = ar.succeeded() ? ar.result().path("deliveryState").asText() : code(ar.cause());
          run.honest.merge(outcome, 1L, Long::sum);
          if (ar.succeeded() && outcome.equals("delivered")) {
            run.latency.recordValue(Math.max(1, (System.nanoTime() - dueNanos) / 1_000));
          }
        });
  }

  private static void spam(ShineClient client, List<String> pool, AtomicInteger next, Run run) {
    if (run.stopped || System.nanoTime() >= run.endNanos || client.closed()) {
      return;
    }
    int n = next.getAndIncrement();
    String blob = pool.get(Math.floorMod(n, pool.size()));
    if (n >= pool.size()) {
      run.repeats.increment();
    }
    boolean measured = System.nanoTime() >= run.measureFromNanos;
    client.request("ReceiveIncomingMessage", ShineClient.object().put("incomingBlobB64", blob)).onComplete(ar -> {
      if (measured && System.nanoTime() < run.endNanos) {
        run.flood.merge(ar.succeeded() ? "200" : code(ar.cause()), 1L, Long::sum);
      }
      spam(client, pool, next, run);
    });
  }

  private static String code(Throwable failure) {
    return failure instanceof ShineClientException e ? e.status() + " " + e.code() : failure.getClass().getSimpleName();
  }

  private static int report(Options o, String tag, Run run, ProcessCpu cpu, Map<String, Double> cpuBefore,
      Map<String, Double> cpuAfter, double verified, int poolSize) {
    Histogram latency = run.latency.getIntervalHistogram();
    long floodTotal = run.flood.values().stream().mapToLong(Long::longValue).sum();
    long floodStored = run.flood.getOrDefault("200", 0L);
    System.out.printf(Locale.ROOT, "honest pairs in the window: %s%n", new TreeMap<>(run.honest));
    System.out.printf(Locale.ROOT, "honest delivered latency ms: p50 %s  p90 %s  p99 %s  max %s  (%d pairs)%n",
        ms(latency, 50), ms(latency, 90), ms(latency, 99), latency.getTotalCount() == 0 ? "na"
            : ms(latency.getMaxValue()), latency.getTotalCount());
    System.out.printf(Locale.ROOT, "flood answers in the window: %.0f/s in all, %.0f/s stored (200); %s%s%n",
        floodTotal / (double) o.seconds, floodStored / (double) o.seconds, new TreeMap<>(run.flood),
        run.repeats.sum() > 0 ? "; " + run.repeats.sum() + " identical repeats past the pool of " + poolSize : "");
    System.out.printf(Locale.ROOT, "recipient server: %.0f message signatures verified/s%n", verified / o.seconds);
    System.out.print(cpu.report(cpuBefore, cpuAfter, o.seconds, latency.getTotalCount(), "honest pair"));
    StringJoiner result = new StringJoiner(" ", "RESULT ", "");
    result.add("scenario=" + o.scenario).add("tag=" + tag).add("rate=" + o.rate).add("seconds=" + o.seconds)
        .add("spam_connections=" + (o.spamWindow == 0 ? 0 : o.spamConnections)).add("spam_window=" + o.spamWindow)
        .add("spam_addresses=" + o.spamAddresses)
        .add("delivered=" + latency.getTotalCount())
        .add("p50_ms=" + ms(latency, 50)).add("p90_ms=" + ms(latency, 90)).add("p99_ms=" + ms(latency, 99))
        .add("max_ms=" + (latency.getTotalCount() == 0 ? "na" : ms(latency.getMaxValue())))
        .add(String.format(Locale.ROOT, "flood_per_s=%.0f", floodTotal / (double) o.seconds))
        .add(String.format(Locale.ROOT, "flood_stored_per_s=%.0f", floodStored / (double) o.seconds))
        .add(String.format(Locale.ROOT, "verified_per_s=%.0f", verified / o.seconds));
    run.honest.forEach((k, v) -> result.add("honest_" + SendReport.key(k) + "=" + v));
    run.flood.forEach((k, v) -> result.add("flood_" + SendReport.key(k) + "=" + v));
    cpuAfter.forEach((name, ms) -> result.add(String.format(Locale.ROOT, "cpu_pct_%s=%.0f", SendReport.key(name),
        100 * (ms - cpuBefore.getOrDefault(name, 0.0)) / 1000 / o.seconds)));
    System.out.println(result);
    return 0;
  }

  /** {@code shine_signature_verifications_total{op="message"}} of one scrape (0 without metrics). */
  private static double verifiedMessages(Map<String, Double> counters) {
    return counters.entrySet().stream().filter(e -> e.getKey().startsWith("shine_signature_verifications_total{")
        && e.getKey().contains("op=\"message\"")).mapToDouble(Map.Entry::getValue).sum();
  }

  private static String serverLogin(Vertx vertx, String url) {
    ShineClient client = ShineClient.connect(vertx, url).await();
    try {
      return client.serverLogin("bench").await();
    } finally {
      client.close();
    }
  }

  /** What one run has seen so far. */
  private static final class Run {
    final long measureFromNanos;
    final long endNanos;
    final Recorder latency = new Recorder(3);
    final Map<String, Long> honest = new ConcurrentHashMap<>();
    final Map<String, Long> flood = new ConcurrentHashMap<>();
    final LongAdder repeats = new LongAdder();
    volatile boolean stopped;

    Run(long measureFromNanos, long endNanos) {
      this.measureFromNanos = measureFromNanos;
      this.endNanos = endNanos;
    }
  }
}
