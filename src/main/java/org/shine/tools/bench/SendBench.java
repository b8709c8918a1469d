package org.shine.tools.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.shine.server.cli.CliContext;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.KeyFile;
import org.shine.tools.bench.SendRun.Sender;
import org.shine.tools.probe.MetricsScrape;
import org.shine.tools.probe.PgCommits;
import org.shine.tools.probe.ProcessCpu;
import org.shine.tools.probe.ProcessSyscalls;
import org.shine.tools.support.Progress;
import org.shine.tools.support.Registrar;

/**
 * {@code bench send}: SendMessagePair over one WebSocket connection per sender, each sender writing to its own
 * recipient, whose live session (by default) receives the {@code IncomingDirectMessage} pushes. Reports what users
 * see — accepted/s, delivered/s at the recipients, send→recipient latency, lost and duplicate pushes — beside the
 * cost per pair: CPU of each server, of PostgreSQL and of the bench, transactions per database, and the servers'
 * own {@code shine_*} counters when they serve {@code /metrics}. Ends with one {@code RESULT key=value ...} line
 * ({@link SendReport}). This class holds the options and the run's order: users and sessions, the samples before and
 * after the measured window; the load itself is {@link SendRun}.
 */
final class SendBench {
  private static final long ANSWER_WAIT_S = 60;
  /** How long the servers get to relay the cards they took to the others. */
  private static final long CARDS_SPREAD_MS = 60_000;

  private SendBench() {
  }

  /** Every server involved, by its serverLogin, and the sessions of the run. */
  record Setup(Map<String, String> servers, List<Sender> senders, List<ShineClient> recipients) {
  }

  /** CPU, transactions and counters at one instant. */
  record Sample(long nanos, Map<String, Double> cpu, Map<String, long[]> syscalls, Map<String, Long> commits,
      Map<String, Map<String, Double>> counters) {
  }

  static int run(SendOptions options, CliContext context) {
    SendSettings settings = SendSettings.from(options);
    ProcessCpu cpu = new ProcessCpu(settings.serverPids(), settings.dbNames());
    Vertx vertx = Vertx.vertx();
    PgCommits commits = PgCommits.of(vertx, settings.dbNames());
    MetricsScrape metrics = new MetricsScrape(vertx);
    FloodLoad flood = null;
    try {
      Setup setup = prepare(vertx, settings);
      sign(settings, setup.senders());
      flood = settings.floodRate() > 0 ? FloodLoad.prepare(vertx, settings.url(), settings.tag(),
          settings.floodRate(), settings.floodHost(), settings.floodAnswers(), settings.deadRoutes(),
          settings.warmup() + settings.seconds())
          : null;
      Sender first = setup.senders().get(0);
      FrameSizes.print(first.pairs, settings.body(), randomBody -> ShineClient.signPair(first.from, first.key,
          first.to, System.currentTimeMillis(), ShineClient.randomNonce(), 0, randomBody));
      System.out.println(describe(settings, setup));
      if (flood != null) {
        System.out.println(flood.describe());
      }

      SendRun run = new SendRun(vertx, System.nanoTime(), settings.warmup(), settings.seconds(),
          settings.freeOnArrival(), settings.slotTimeoutMs());
      setup.recipients().forEach(recipient -> recipient.onEvent(run::onRecipientEvent));
      if (flood != null) {
        flood.start(System.nanoTime(), run.windowEnd());
      }
      if (settings.warmup() > 0) {
        System.out.printf(Locale.ROOT, "warming up for %d s (not measured)...%n", settings.warmup());
      }
      Future<Void> load = settings.openLoop() ? run.openLoop(setup.senders(), settings.rate())
          : run.closedLoop(setup.senders(), settings.window());
      Sample before;
      Sample after;
      try (Progress progress = Progress.start("bench send: pairs sent", context, 0,
          () -> run.warmupSent.sum() + run.measuredSent.sum())) {
        sleepUntil(run.windowStart());
        before = sample(cpu, commits, metrics, setup.servers(), settings.metrics());
        System.out.printf(Locale.ROOT, "measuring for %d s...%n", settings.seconds());
        sleepUntil(run.windowEnd());
        after = sample(cpu, commits, metrics, setup.servers(), settings.metrics());
      }
      awaitLoad(load);
      awaitAnswers(run);
      awaitArrivals(run, settings);
      if (flood != null) {
        awaitLoad(flood.finished());
      }
      long openSessions = openSessions(setup.recipients());
      return SendReport.report(settings, setup, run, before, after, cpu, openSessions, flood);
    } finally {
      if (flood != null) {
        flood.close();
      }
      commits.close();
      metrics.close();
      vertx.close().await();
    }
  }

  /**
   * Registers one sender and one recipient per connection index, each card on the servers it names, and waits until
   * every server involved has both (by relay) so each can verify and route at once; logs the senders in on
   * {@code --server} and, when online, the recipients on their session server.
   */
  private static Setup prepare(Vertx vertx, SendSettings settings) {
    List<String> urls = new ArrayList<>(List.of(settings.url()));
    if (settings.senderSibling() != null) {
      urls.add(settings.senderSibling());
    }
    urls.addAll(settings.recipientUrls());
    Map<String, String> servers = new LinkedHashMap<>();
    List<String> logins = new ArrayList<>();
    List<ShineClient> admins = new ArrayList<>();
    for (String url : urls) {
      ShineClient admin = ShineClient.connect(vertx, url).await();
      admins.add(admin);
      logins.add(admin.serverLogin("bench").await());
      servers.putIfAbsent(logins.get(logins.size() - 1), url);
    }
    List<Map.Entry<String, String>> senderRoutes = new ArrayList<>();
    senderRoutes.add(Map.entry(logins.get(0), settings.url()));
    if (settings.senderSibling() != null) {
      senderRoutes.add(Map.entry(logins.get(1), settings.senderSibling()));
    }
    List<Map.Entry<String, String>> recipientRoutes = new ArrayList<>();
    int firstRecipient = senderRoutes.size();
    for (int i = 0; i < settings.recipientUrls().size(); i++) {
      recipientRoutes.add(Map.entry(logins.get(firstRecipient + i), settings.recipientUrls().get(i)));
    }
    if (recipientRoutes.isEmpty()) {
      recipientRoutes = senderRoutes;
    }
    System.out.printf(Locale.ROOT, "registering %d senders (routes %s) and %d recipients (routes %s)...%n",
        settings.clients(), names(senderRoutes), settings.clients(), names(recipientRoutes));
    List<Sender> senders = new ArrayList<>();
    List<ShineClient> recipients = new ArrayList<>();
    List<KeyFile> fromKeys = new ArrayList<>();
    List<KeyFile> toKeys = new ArrayList<>();
    try (Registrar registrar = new Registrar(vertx)) {
      for (int i = 0; i < settings.clients(); i++) {
        fromKeys.add(KeyFile.generate("b" + settings.tag() + "-s" + i));
        toKeys.add(KeyFile.generate("b" + settings.tag() + "-r" + i));
        Future.all(registrar.publish(fromKeys.get(i).login().orElseThrow(), fromKeys.get(i), senderRoutes),
            registrar.publish(toKeys.get(i).login().orElseThrow(), toKeys.get(i), recipientRoutes)).await();
      }
      registrar.awaitKnown(List.copyOf(servers.values()), CARDS_SPREAD_MS);
    }
    for (int i = 0; i < settings.clients(); i++) {
      String from = fromKeys.get(i).login().orElseThrow();
      String to = toKeys.get(i).login().orElseThrow();
      KeyFile fromKey = fromKeys.get(i);
      KeyFile toKey = toKeys.get(i);
      ShineClient sender = ShineClient.connect(vertx, settings.url(), settings.offerCompression()).await();
      sender.login(from, fromKey).await();
      String url = settings.url();
      boolean compression = settings.offerCompression();
      senders.add(new Sender(sender, () -> ShineClient.connect(vertx, url, compression)
          .compose(client -> client.login(from, fromKey).map(client)), from, fromKey, to));
      if (settings.recipientsOnline()) {
        ShineClient recipient = ShineClient.connect(vertx, settings.recipientSessionUrl(),
            settings.offerCompression()).await();
        recipient.login(to, toKey).await();
        recipients.add(recipient);
      }
    }
    admins.forEach(ShineClient::close);
    return new Setup(servers, senders, recipients);
  }

  private static String names(List<Map.Entry<String, String>> routes) {
    return routes.stream().map(Map.Entry::getKey).toList().toString();
  }

  private static void sign(SendSettings settings, List<Sender> senders) {
    long perSender = settings.pairsPerSender();
    System.out.printf(Locale.ROOT, "signing %d pairs for each of %d senders...%n", perSender, senders.size());
    byte[] body = new byte[settings.body()];
    Arrays.fill(body, (byte) 'x');
    long start = System.nanoTime();
    senders.parallelStream().forEach(sender -> sender.sign(perSender, body));
    System.out.printf(Locale.ROOT, "signed in %.1f s%n", (System.nanoTime() - start) / 1e9);
  }

  private static String describe(SendSettings settings, Setup setup) {
    long senderDeflate = setup.senders().stream().filter(s -> s.client.compressed()).count();
    long recipientDeflate = setup.recipients().stream().filter(ShineClient::compressed).count();
    String loop = settings.openLoop() ? "open loop at " + settings.rate() + " pairs/s"
        : "closed loop, " + settings.window() + " in flight per sender, slot freed on "
            + (settings.freeOnArrival() ? "arrival at the recipient" : "the answer")
            + " (or after " + settings.slotTimeoutMs() + " ms)";
    String sessions = settings.recipientsOnline()
        ? "recipients online on " + serverOf(setup.servers(), settings.recipientSessionUrl())
        : "recipients offline";
    return String.format(Locale.ROOT, "scenario %s: %s; %d senders on %s, %s; %d-byte bodies; compression %s"
            + " (the server took permessage-deflate on %d of %d sender and %d of %d recipient sessions)",
        settings.scenario(), loop, settings.clients(), serverOf(setup.servers(), settings.url()), sessions,
        settings.body(), settings.offerCompression() ? "offered" : "not offered", senderDeflate,
        setup.senders().size(), recipientDeflate, setup.recipients().size());
  }

  private static String serverOf(Map<String, String> servers, String url) {
    return servers.entrySet().stream().filter(e -> e.getValue().equals(url)).map(Map.Entry::getKey).findFirst()
        .orElse(url);
  }

  private static Sample sample(ProcessCpu cpu, PgCommits commits, MetricsScrape metrics, Map<String, String> servers,
      boolean scrape) {
    long nanos = System.nanoTime();
    Map<String, Double> cpuNow = cpu.sample();
    Map<String, long[]> syscalls = new ProcessSyscalls(cpu.servers()).sample();
    Future<Map<String, Long>> ended = commits.sample();
    Map<String, Future<Map<String, Double>>> scraped = new LinkedHashMap<>();
    if (scrape) {
      servers.forEach((login, url) -> scraped.put(login, metrics.counters(url)));
    }
    List<Future<?>> all = new ArrayList<>(scraped.values());
    all.add(ended);
    Future.join(all).otherwiseEmpty().await();
    Map<String, Map<String, Double>> counters = new LinkedHashMap<>();
    scraped.forEach((login, future) -> counters.put(login, future.succeeded() ? future.result() : Map.of()));
    if (ended.failed()) {
      System.out.println("warning: pg_stat_database not read: " + ended.cause().getMessage());
    }
    return new Sample(nanos, cpuNow, syscalls, ended.succeeded() ? ended.result() : Map.of(), counters);
  }

  private static void awaitLoad(Future<Void> load) {
    CountDownLatch done = new CountDownLatch(1);
    load.onComplete(ar -> done.countDown());
    try {
      if (!done.await(ANSWER_WAIT_S, TimeUnit.SECONDS)) {
        System.out.printf(Locale.ROOT, "warning: sends still unanswered %d s after the window%n", ANSWER_WAIT_S);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Waits until every send is answered, for at most {@link #ANSWER_WAIT_S}. */
  private static void awaitAnswers(SendRun run) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ANSWER_WAIT_S);
    while (run.unanswered() > 0 && System.nanoTime() < deadline) {
      sleepQuietly(50);
    }
  }

  /** Waits until every measured pair accepted has arrived, for at most the grace after the answers. */
  private static void awaitArrivals(SendRun run, SendSettings settings) {
    if (!settings.recipientsOnline()) {
      return;
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(settings.graceS());
    while (run.missing() > 0 && System.nanoTime() < deadline) {
      sleepQuietly(50);
    }
  }

  /** Recipient sessions that still answer a request (a closed one fails at once). */
  private static long openSessions(List<ShineClient> recipients) {
    List<Future<?>> probes = new ArrayList<>();
    for (ShineClient recipient : recipients) {
      probes.add(recipient.request("GetUserSettings", ShineClient.object()));
    }
    Future.join(probes).otherwiseEmpty().await();
    return probes.stream().filter(Future::succeeded).count();
  }

  /** Sleeps this thread until {@code System.nanoTime()} reaches {@code nanos} (a load generator's pacing). */
  static void sleepUntil(long nanos) {
    long left = nanos - System.nanoTime();
    if (left > 0) {
      sleepQuietly(TimeUnit.NANOSECONDS.toMillis(left) + 1);
    }
  }

  private static void sleepQuietly(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
