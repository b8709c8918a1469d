package org.shine.tools.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.shine.server.cli.CliContext;
import org.shine.server.cli.CliFailure;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.KeyFile;
import org.shine.tools.bench.SendRun.Sender;
import org.shine.tools.probe.MetricsScrape;
import org.shine.tools.probe.PgCommits;
import org.shine.tools.probe.ProcessCpu;
import org.shine.tools.support.Progress;
import org.shine.tools.support.Registrar;
import picocli.CommandLine.Option;

/**
 * {@code bench send}: SendMessagePair over one WebSocket connection per sender, each sender writing to its own
 * recipient, whose live session (by default) receives the {@code IncomingDirectMessage} pushes. Reports what users
 * see — accepted/s, delivered/s at the recipients, send→recipient latency, lost and duplicate pushes — beside the
 * cost per pair: CPU of each server, of PostgreSQL and of the bench, transactions per database, and the servers'
 * own {@code shine_*} counters when they serve {@code /metrics}. Ends with one {@code RESULT key=value ...} line.
 */
final class SendBench {
  static final String DESCRIPTION = "SendMessagePair over C connections, one sender each writing to its own"
      + " recipient: accepted/s, delivered/s, latency percentiles (HdrHistogram), lost and duplicate pushes, CPU and"
      + " transactions per pair; ends with one RESULT key=value line.";

  /** The command line of {@code bench send}. */
  static final class Options {
    @Option(names = "--server", required = true, paramLabel = "URL", description = "the senders' server")
    String server;

    @Option(names = "--clients", defaultValue = "50", paramLabel = "C", description = "connections, one sender each")
    int clients;

    @Option(names = "--rate", defaultValue = "0", paramLabel = "R",
        description = "0: a closed loop with W sends in flight per sender; R: an open loop of R pairs/s in all"
            + " (latency from the intended send time)")
    long rate;

    @Option(names = "--window", defaultValue = "10", paramLabel = "W", description = "sends in flight per sender")
    int window;

    @Option(names = "--seconds", defaultValue = "20", paramLabel = "S", description = "seconds measured")
    int seconds;

    @Option(names = "--warmup", defaultValue = "5", paramLabel = "S", description = "seconds of warm-up, not measured")
    int warmup;

    @Option(names = "--body", defaultValue = "200", paramLabel = "BYTES", description = "bytes per body")
    int body;

    @Option(names = "--tag", paramLabel = "TAG", description = "login prefix of the bench's users (default: random)")
    String tag;

    @Option(names = "--recipients", defaultValue = "online", paramLabel = "online|offline",
        description = "each recipient holds a live session on the first --recipient-server, or on --server")
    String recipients;

    @Option(names = "--free-on", paramLabel = "arrival|answer",
        description = "a closed loop's slot is freed when the recipient gets the pair (default when online) or on the"
            + " 200 answer (default when offline)")
    String freeOn;

    @Option(names = "--slot-timeout-ms", defaultValue = "10000", paramLabel = "T",
        description = "a slot is freed anyway after T ms")
    long slotTimeoutMs;

    @Option(names = "--grace", defaultValue = "10", paramLabel = "S",
        description = "after the run, how long arrivals are awaited before a pair counts as lost")
    int grace;

    @Option(names = "--recipient-server", paramLabel = "URL",
        description = "recipients live on this server instead (once or twice: federated)")
    List<String> recipientServers = new ArrayList<>();

    @Option(names = "--sender-sibling", paramLabel = "URL",
        description = "senders have this second server too (pairs are forwarded and synced)")
    String senderSibling;

    @Option(names = "--compression", defaultValue = "none", paramLabel = "offer|none",
        description = "every session offers permessage-deflate, as browsers and Node do")
    String compression;

    @Option(names = "--server-pid", paramLabel = "[NAME=]PID",
        description = "CPU per pair of that process (and of PostgreSQL, the bench); repeatable")
    List<String> serverPids = new ArrayList<>();

    @Option(names = "--db-name", paramLabel = "NAME",
        description = "transactions per pair in that database (pg_stat_database at SHINE_DB_*); repeatable")
    List<String> dbNames = new ArrayList<>();

    @Option(names = "--metrics", defaultValue = "on", paramLabel = "on|off",
        description = "scrape /metrics of every server involved for shine_* counters")
    String metrics;

    @Option(names = "--scenario", defaultValue = "send", paramLabel = "NAME", description = "names the RESULT line")
    String scenario;

    @Option(names = "--flood-rate", defaultValue = "0", paramLabel = "R",
        description = "beside the load, R pairs/s from other senders on --server to a login routed only to"
            + " --flood-peer (issue 16, attack 3); 0: none")
    long floodRate;

    @Option(names = "--flood-peer", defaultValue = "tarpit", paramLabel = "tarpit|answering",
        description = "the flood's recipient server, a listener of the bench: never answers ReceiveIncomingMessage,"
            + " or answers it at once (the control)")
    String floodPeer;

    @Option(names = "--flood-host", defaultValue = "127.0.0.66", paramLabel = "ADDRESS",
        description = "the loopback address (127.0.0.0/8) the flood's peer listens on; its route is named after it")
    String floodHost;
  }

  /** A server's default per-user write rate (limits.sendsPerUserPerS): no sender can be accepted faster. */
  private static final int SENDS_PER_USER_PER_S = 200;
  private static final long ANSWER_WAIT_S = 60;
  /** How long the servers get to relay the cards they took to the others. */
  private static final long CARDS_SPREAD_MS = 60_000;

  private SendBench() {
  }

  /** Settings of one run, from the command line. */
  private record Settings(String url, List<String> recipientUrls, String senderSibling, int clients, long rate,
      int seconds, int warmup, int window, int body, String tag, boolean offerCompression, boolean recipientsOnline,
      boolean freeOnArrival, long slotTimeoutMs, int graceS, List<String> serverPids, List<String> dbNames,
      boolean metrics, String scenario, long floodRate, boolean floodAnswers, String floodHost) {

    static Settings from(Options options) {
      String recipients = options.recipients;
      String compression = options.compression;
      String metrics = options.metrics;
      requireOneOf("recipients", recipients, "online", "offline");
      requireOneOf("compression", compression, "offer", "none");
      requireOneOf("metrics", metrics, "on", "off");
      boolean online = recipients.equals("online");
      String freeOn = options.freeOn != null ? options.freeOn : online ? "arrival" : "answer";
      requireOneOf("free-on", freeOn, "arrival", "answer");
      if (freeOn.equals("arrival") && !online) {
        throw CliFailure.usage("--free-on arrival needs --recipients online");
      }
      Settings settings = new Settings(options.server, List.copyOf(options.recipientServers),
          options.senderSibling, options.clients, options.rate, options.seconds, options.warmup, options.window,
          options.body, options.tag != null ? options.tag : Long.toString(System.currentTimeMillis() % 1_000_000, 36),
          compression.equals("offer"), online, freeOn.equals("arrival"), options.slotTimeoutMs, options.grace,
          List.copyOf(options.serverPids), List.copyOf(options.dbNames), metrics.equals("on"), options.scenario,
          options.floodRate, options.floodPeer.equals("answering"), options.floodHost);
      requireOneOf("flood-peer", options.floodPeer, "tarpit", "answering");
      if (options.floodRate < 0 || !options.floodHost.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}")) {
        throw CliFailure.usage("--flood-rate must not be negative and --flood-host must be a 127.x.y.z address"
            + " (a benchmark never makes a server dial beyond loopback)");
      }
      if (settings.clients < 1 || settings.window < 1 || settings.seconds < 1 || settings.warmup < 0
          || settings.rate < 0 || settings.body < 0 || settings.recipientUrls.size() > 2) {
        throw CliFailure.usage("bench send: --clients, --window and --seconds must be at least 1, --warmup, --rate and"
            + " --body not negative, --recipient-server at most twice");
      }
      return settings;
    }

    private static void requireOneOf(String name, String value, String... allowed) {
      if (!Arrays.asList(allowed).contains(value)) {
        throw CliFailure.usage("--" + name + " must be one of " + String.join(", ", allowed));
      }
    }

    String recipientSessionUrl() {
      return recipientUrls.isEmpty() ? url : recipientUrls.get(0);
    }

    boolean openLoop() {
      return rate > 0;
    }

    /** Pairs to sign before the run per sender: what the run can use, two spare for round-robin rounding. */
    long pairsPerSender() {
      long total = seconds + warmup;
      return 2 + (openLoop() ? (rate * total + clients - 1) / clients : SENDS_PER_USER_PER_S * (total + 1));
    }
  }

  /** Every server involved, by its serverLogin, and the sessions of the run. */
  private record Setup(Map<String, String> servers, List<Sender> senders, List<ShineClient> recipients) {
  }

  /** CPU, transactions and counters at one instant. */
  private record Sample(long nanos, Map<String, Double> cpu, Map<String, Long> commits,
      Map<String, Map<String, Double>> counters) {
  }

  static int run(Options options, CliContext context) {
    Settings settings = Settings.from(options);
    ProcessCpu cpu = new ProcessCpu(settings.serverPids(), settings.dbNames());
    Vertx vertx = Vertx.vertx();
    PgCommits commits = PgCommits.of(vertx, settings.dbNames());
    MetricsScrape metrics = new MetricsScrape(vertx);
    FloodLoad flood = null;
    try {
      Setup setup = prepare(vertx, settings);
      sign(settings, setup.senders());
      flood = settings.floodRate() > 0 ? FloodLoad.prepare(vertx, settings.url(), settings.tag(),
          settings.floodRate(), settings.floodHost(), settings.floodAnswers(), settings.warmup() + settings.seconds())
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
      return report(settings, setup, run, before, after, cpu, openSessions, flood);
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
  private static Setup prepare(Vertx vertx, Settings settings) {
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

  private static void sign(Settings settings, List<Sender> senders) {
    long perSender = settings.pairsPerSender();
    System.out.printf(Locale.ROOT, "signing %d pairs for each of %d senders...%n", perSender, senders.size());
    byte[] body = new byte[settings.body()];
    Arrays.fill(body, (byte) 'x');
    long start = System.nanoTime();
    senders.parallelStream().forEach(sender -> sender.sign(perSender, body));
    System.out.printf(Locale.ROOT, "signed in %.1f s%n", (System.nanoTime() - start) / 1e9);
  }

  private static String describe(Settings settings, Setup setup) {
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
    return new Sample(nanos, cpuNow, ended.succeeded() ? ended.result() : Map.of(), counters);
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
  private static void awaitArrivals(SendRun run, Settings settings) {
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

  private static int report(Settings settings, Setup setup, SendRun run, Sample before, Sample after,
      ProcessCpu cpu, long openSessions, FloodLoad flood) {
    double window = settings.seconds();
    long accepted = run.acceptedInWindow.sum();
    long delivered = run.deliveredInWindow.sum();
    // the unit of cost: a pair that reached its recipient; with nobody online, a pair accepted
    long pairs = settings.recipientsOnline() ? delivered : accepted;
    String unit = settings.recipientsOnline() ? "delivered pair" : "accepted pair";
    Histogram arrival = run.arrivalMicros();
    Histogram accept = run.acceptMicros();
    long lost = settings.recipientsOnline() ? run.missing() : 0;
    long late = setup.senders().stream().mapToLong(Sender::signedLate).sum();

    System.out.printf(Locale.ROOT, "warm-up: %d pairs sent, %d error answers%n", run.warmupSent.sum(),
        run.warmupErrors.sum());
    System.out.printf(Locale.ROOT, "window %.0f s: accepted %.0f pairs/s (200 answers), delivered %.0f pairs/s"
        + " (first pushes to recipient sessions)%n", window, accepted / window, delivered / window);
    if (arrival.getTotalCount() > 0) {
      System.out.printf(Locale.ROOT, "send→recipient latency ms: p50 %s  p90 %s  p99 %s  max %s  (%d pairs)%n",
          ms(arrival, 50), ms(arrival, 90), ms(arrival, 99), ms(arrival.getMaxValue()), arrival.getTotalCount());
    }
    if (accept.getTotalCount() > 0) {
      System.out.printf(Locale.ROOT, "accept latency ms: p50 %s  p90 %s  p99 %s  max %s  (%d answers)%n",
          ms(accept, 50), ms(accept, 90), ms(accept, 99), ms(accept.getMaxValue()), accept.getTotalCount());
    }
    System.out.printf(Locale.ROOT, "pairs sent in the window: %d; accepted %d %s; arrived %d; lost %s"
            + " (accepted, not pushed within %d s after the last answer); duplicate pushes %d; slot timeouts %d;"
            + " pushes of unknown pairs %d%n", run.measuredSent.sum(), run.measuredAccepted.sum(), run.states(),
        run.measuredArrived.sum(), settings.recipientsOnline() ? Long.toString(lost) : "n/a", settings.graceS(),
        run.duplicates.sum(), run.slotTimeouts.sum(), run.unexpectedPushes.sum());
    System.out.printf(Locale.ROOT, "errors: %s%s%n", run.errors().isEmpty() ? "none" : run.errors(),
        run.unanswered() == 0 ? "" : "; sends never answered: " + run.unanswered());
    System.out.printf(Locale.ROOT, "per second from the start (warm-up %d s, then the window of %d s),"
        + " second:accepted/delivered/errors: %s%n", settings.warmup(), settings.seconds(), run.timeline());
    if (settings.recipientsOnline()) {
      System.out.printf(Locale.ROOT, "recipient sessions still open at the end: %d of %d%n", openSessions,
          setup.recipients().size());
    }
    if (late > 0) {
      System.out.printf(Locale.ROOT, "note: %d pairs were signed during the run (the pre-signed ones ran out)%n",
          late);
    }
    if (flood != null) {
      System.out.println(flood.report());
    }
    double cpuSeconds = (after.nanos() - before.nanos()) / 1e9;
    System.out.print(cpu.report(before.cpu(), after.cpu(), cpuSeconds, pairs, unit));
    Map<String, Double> cpuPerPair = ProcessCpu.perUnit(before.cpu(), after.cpu(), pairs);
    Map<String, Double> commitsPerPair = new LinkedHashMap<>();
    after.commits().forEach((db, n) -> commitsPerPair.put(db, pairs == 0 ? Double.NaN
        : (double) (n - before.commits().getOrDefault(db, n)) / pairs));
    commitsPerPair.forEach((db, perPair) -> System.out.printf(Locale.ROOT,
        "  transactions in %-31s %8.2f per %s%n", db, perPair, unit));
    Map<String, Double> countersPerPair = new LinkedHashMap<>();
    after.counters().forEach((server, counters) -> counters.forEach((name, value) -> {
      double delta = value - before.counters().getOrDefault(server, Map.of()).getOrDefault(name, 0.0);
      if (delta != 0 && pairs > 0) {
        countersPerPair.put(server + " " + name, delta / pairs);
      }
    }));
    countersPerPair.forEach((name, perPair) -> System.out.printf(Locale.ROOT, "  metric %-60s %8.2f per %s%n",
        name, perPair, unit));

    StringJoiner result = new StringJoiner(" ", "RESULT ", "");
    result.add("scenario=" + settings.scenario());
    result.add("loop=" + (settings.openLoop() ? "open" : "closed"));
    result.add("rate=" + settings.rate());
    result.add("clients=" + settings.clients());
    result.add("window=" + settings.window());
    result.add("recipients=" + (settings.recipientsOnline() ? "online" : "offline"));
    result.add("free_on=" + (settings.openLoop() ? "na" : settings.freeOnArrival() ? "arrival" : "answer"));
    result.add("body=" + settings.body());
    result.add("seconds=" + settings.seconds());
    result.add("compression=" + (settings.offerCompression() ? "offer" : "none"));
    result.add(String.format(Locale.ROOT, "accepted_per_s=%.0f", accepted / window));
    result.add(String.format(Locale.ROOT, "delivered_per_s=%.0f", delivered / window));
    result.add("p50_ms=" + ms(arrival, 50));
    result.add("p90_ms=" + ms(arrival, 90));
    result.add("p99_ms=" + ms(arrival, 99));
    result.add("max_ms=" + (arrival.getTotalCount() == 0 ? "na" : ms(arrival.getMaxValue())));
    result.add("accept_p50_ms=" + ms(accept, 50));
    result.add("accept_p99_ms=" + ms(accept, 99));
    result.add("sent=" + run.measuredSent.sum());
    result.add("accepted=" + run.measuredAccepted.sum());
    result.add("arrived=" + run.measuredArrived.sum());
    result.add("lost=" + (settings.recipientsOnline() ? Long.toString(lost) : "na"));
    result.add("dup=" + run.duplicates.sum());
    result.add("slot_timeouts=" + run.slotTimeouts.sum());
    result.add("errors=" + run.errorCount());
    result.add("unanswered=" + run.unanswered());
    run.errors().forEach((code, n) -> result.add("error_" + key(code) + "=" + n));
    result.add("sessions_open=" + (settings.recipientsOnline() ? openSessions + "/" + setup.recipients().size()
        : "na"));
    result.add("per=" + (settings.recipientsOnline() ? "delivered" : "accepted"));
    cpuPerPair.forEach((name, us) -> {
      String field = switch (name) {
        case ProcessCpu.POSTGRES -> "pg_us_per_pair";
        case ProcessCpu.POSTGRES_BACKENDS -> "pg_backends_us_per_pair";
        case ProcessCpu.BENCH -> "bench_us_per_pair";
        default -> "cpu_us_per_pair_" + key(name);
      };
      result.add(field + "=" + (pairs == 0 ? "na" : String.format(Locale.ROOT, "%.0f", us)));
    });
    commitsPerPair.forEach((db, perPair) -> result.add("commits_per_pair_" + key(db) + "="
        + (perPair.isNaN() ? "na" : String.format(Locale.ROOT, "%.2f", perPair))));
    countersPerPair.forEach((name, perPair) -> result.add(String.format(Locale.ROOT, "m_%s=%.3f", key(name),
        perPair)));
    if (flood != null) {
      flood.addResult(result);
    }
    ProcessCpu.percentOfCore(before.cpu(), after.cpu(), cpuSeconds).forEach((name, percent) -> result.add(String.format(
        Locale.ROOT, "cpu_pct_%s=%.0f", key(name), percent)));
    System.out.println(result);
    return run.errorCount() == 0 && lost == 0 && run.duplicates.sum() == 0 && run.unanswered() == 0 ? 0 : 1;
  }

  /** A RESULT key part: letters, digits and single underscores. */
  static String key(String text) {
    return text.replaceAll("[^A-Za-z0-9]+", "_").replaceAll("^_|_$", "");
  }

  /** A percentile of a histogram of microseconds, in milliseconds with one decimal ("na" when empty). */
  static String ms(Histogram histogram, double percentile) {
    return histogram.getTotalCount() == 0 ? "na" : ms(histogram.getValueAtPercentile(percentile));
  }

  /** Microseconds in milliseconds with one decimal. */
  static String ms(long micros) {
    return String.format(Locale.ROOT, "%.1f", micros / 1000.0);
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
