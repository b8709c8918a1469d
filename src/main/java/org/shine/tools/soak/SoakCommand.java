package org.shine.tools.soak;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.shine.server.adapter.HubClient;
import org.shine.server.cli.CliFailure;
import org.shine.server.client.Resender;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.client.ShineClientException;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmFormatException;
import org.shine.server.dm.KeyFile;
import org.shine.server.util.Json;
import org.shine.tools.ledger.MessageLedger;
import org.shine.tools.support.Registrar;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code soak}: a bounded mixed load against four running servers (senders' routes [s1, s2], recipients' [s3, s4]) —
 * signed sends, edits, read receipts, tombstones and hub long polls — with one server restarted (SIGTERM, then the
 * same command on the same database) every few minutes, a progress line every 10 s and, after the load settles, the
 * {@link MessageLedger} and the servers' heap after GC and open descriptors against their level at the baseline.
 * The servers run from {@code --run-dir}: {@code sN.json}, {@code sN.pid} (kept current across restarts),
 * {@code sN.log}. Exits 1 on a loss, a duplicate, a wrong entry or growth beyond the bound.
 */
@Command(name = "soak", mixinStandardHelpOptions = true, description = {
    "A bounded mixed load with restarts against four running servers (scripts/soak.sh starts them).",
    "Half sends, a fifth edits, a fifth receipts, a tenth deletes, and hub polls, with a server restarted every few"
        + " minutes; a progress line every 10 s, then the ledger and heap after GC and descriptors against their"
        + " baseline. Exit 1 on a loss, a duplicate, a wrong entry or growth beyond 20 %%."})
public final class SoakCommand implements Callable<Integer> {
  @Option(names = "--server", required = true, paramLabel = "NAME=URL",
      description = "four times: the senders' two servers, then the recipients' two")
  List<String> serverOptions;

  @Option(names = "--run-dir", required = true, paramLabel = "DIR",
      description = "where sN.json, sN.pid and sN.log of the servers are")
  Path runDir;

  @Option(names = "--seconds", defaultValue = "3600", paramLabel = "S", description = "seconds of load (3600)")
  long seconds;

  @Option(names = "--baseline-s", paramLabel = "B",
      description = "the baseline of heap and descriptors, B s in (300; a third of S when S < 900)")
  Long baselineS;

  @Option(names = "--restart-every-s", defaultValue = "180", paramLabel = "R",
      description = "every R s the next server of --restart is stopped and started again (180; 0: never)")
  long restartEveryS;

  @Option(names = "--restart", paramLabel = "s2,s3,s4,s1", description = "the order of the restarts")
  String restart;

  @Option(names = "--users", defaultValue = "20", paramLabel = "U", description = "sender/recipient pairs (20)")
  int users;

  @Option(names = "--rate", defaultValue = "20", paramLabel = "OPS", description = "operations/s (20)")
  int rate;

  @Option(names = "--hub-users", defaultValue = "4", paramLabel = "H",
      description = "recipients that also poll their other server's hub (4)")
  int hubUsers;

  @Option(names = "--settle-s", defaultValue = "180", paramLabel = "T",
      description = "seconds for everything to settle after the load (180)")
  long settleS;

  @Option(names = "--java-opts", defaultValue = "", paramLabel = "\"...\"",
      description = "JVM options of a restarted server")
  String javaOpts;

  private static final long PROGRESS_MS = 10_000;
  /** How long the servers get to relay the cards they took to the others. */
  private static final long CARDS_SPREAD_MS = 60_000;
  private static final long HEAP_SAMPLE_EVERY_MS = 60_000;
  private static final int MAX_IN_FLIGHT = 200;
  private static final int RECENT = 4096;
  private static final double GROWTH_BOUND = 1.20;
  /** As a patient client: a restart on this shared machine took up to 80 s, so resends span about three minutes. */
  private static final Resender.Policy POLICY = new Resender.Policy(40, 200, 5_000, 30_000);
  private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");

  // made when the command runs: picocli builds every subcommand's object for any command line
  private Settings settings;
  private Vertx vertx;
  private HttpClient http;
  private final MessageLedger ledger = new MessageLedger();
  private final List<UserPair> pairs = new ArrayList<>();
  private final AtomicReferenceArray<Live> recent = new AtomicReferenceArray<>(RECENT);
  private final AtomicLong recentCount = new AtomicLong();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final Map<String, LongAdder> ops = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
  private final Map<String, Long> heapKb = new ConcurrentHashMap<>();
  private final Map<String, Long> hubDeliveries = new ConcurrentHashMap<>();
  private final Set<String> hubMessages = ConcurrentHashMap.newKeySet();
  private final LongAdder hubDuplicates = new LongAdder();
  private final LongAdder restarts = new LongAdder();
  private final AtomicBoolean loadOn = new AtomicBoolean(true);
  private final AtomicBoolean restartsOn = new AtomicBoolean(true);
  private final AtomicBoolean restarting = new AtomicBoolean();
  private final AtomicBoolean hubOn = new AtomicBoolean(true);
  private volatile long startMs = System.currentTimeMillis();

  /** Options of one run. */
  private record Settings(Map<String, String> servers, Path runDir, long seconds, long baselineS, long restartEveryS,
      List<String> restartOrder, int users, int rate, int hubUsers, long settleS, List<String> javaOpts) {

    static Settings of(List<String> serverOptions, Path runDir, long seconds, Long baselineS, long restartEveryS,
        String restart, int users, int rate, int hubUsers, long settleS, String javaOptions) {
      Map<String, String> servers = new LinkedHashMap<>();
      for (String server : serverOptions) {
        int eq = server.indexOf('=');
        if (eq <= 0) {
          throw CliFailure.usage("--server takes NAME=URL: " + server);
        }
        servers.put(server.substring(0, eq), server.substring(eq + 1));
      }
      if (servers.size() != 4) {
        throw CliFailure.usage("soak needs four --server NAME=URL (senders' two, then recipients' two)");
      }
      long baseline = baselineS != null ? baselineS : seconds >= 900 ? 300 : seconds / 3;
      List<String> order = Arrays.stream((restart != null ? restart : String.join(",", rotation(servers)))
          .split(",")).map(String::trim).filter(name -> !name.isEmpty()).toList();
      for (String name : order) {
        if (!servers.containsKey(name)) {
          throw CliFailure.usage("--restart names an unknown server: " + name);
        }
      }
      String opts = javaOptions.trim();
      Settings settings = new Settings(servers, runDir, seconds, baseline, restartEveryS, order, users, rate,
          hubUsers, settleS, opts.isEmpty() ? List.of() : List.of(opts.split("\\s+")));
      if (seconds < 1 || baseline < 1 || baseline >= seconds || settings.restartEveryS < 0 || settings.users < 1
          || settings.rate < 1 || settings.hubUsers < 0 || settings.hubUsers > settings.users
          || settings.settleS < 1) {
        throw CliFailure.usage("bad soak options: S and T ≥ 1, 1 ≤ B < S, R ≥ 0, U and OPS ≥ 1, 0 ≤ H ≤ U");
      }
      return settings;
    }

    /** s2, s3, s4, s1: the sender's first server last, as it holds the most sessions. */
    private static List<String> rotation(Map<String, String> servers) {
      List<String> names = new ArrayList<>(servers.keySet());
      names.add(names.remove(0));
      return names;
    }

    List<String> names() {
      return List.copyOf(servers.keySet());
    }

    String url(int index) {
      return servers.get(names().get(index));
    }
  }

  /** One sender and its recipient, each with a resending session on one of its two servers. */
  private static final class UserPair {
    final int index;
    final String sender;
    final KeyFile senderKey;
    final String recipient;
    final KeyFile recipientKey;
    Resender senderSession;
    Resender recipientSession;
    final AtomicLong lastCreatedAtMs = new AtomicLong();

    UserPair(int index, String sender, KeyFile senderKey, String recipient, KeyFile recipientKey) {
      this.index = index;
      this.sender = sender;
      this.senderKey = senderKey;
      this.recipient = recipient;
      this.recipientKey = recipientKey;
    }

    /** createdAtMs strictly increasing per sender, so history pages split exactly at a createdAtMs. */
    long nextCreatedAtMs() {
      long now = System.currentTimeMillis();
      return lastCreatedAtMs.updateAndGet(last -> Math.max(now, last + 1));
    }
  }

  /** An accepted message that later operations may pick: one at a time ({@link #busy}), none once deleted. */
  private static final class Live {
    final UserPair pair;
    final long createdAtMs;
    final long nonce;
    final String baseKey;
    final AtomicBoolean busy = new AtomicBoolean();
    volatile long revision;
    volatile boolean deleted;
    volatile boolean read;

    Live(UserPair pair, long createdAtMs, long nonce, String baseKey) {
      this.pair = pair;
      this.createdAtMs = createdAtMs;
      this.nonce = nonce;
      this.baseKey = baseKey;
    }
  }

  @Override
  public Integer call() {
    settings = Settings.of(serverOptions, runDir, seconds, baselineS, restartEveryS, restart, users, rate, hubUsers,
        settleS, javaOpts);
    vertx = Vertx.vertx();
    http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
    return soak();
  }

  private int soak() {
    try {
      prepare();
      List<Thread> pollers = startHubPollers();
      startMs = System.currentTimeMillis();
      Thread restarter = thread("soak-restarts", this::restartLoop);
      Thread heap = thread("soak-heap", this::heapLoop);
      long timer = vertx.setPeriodic(100, id -> tick());
      Map<String, Sample> baseline = null;
      long end = startMs + TimeUnit.SECONDS.toMillis(settings.seconds());
      long baselineAt = startMs + TimeUnit.SECONDS.toMillis(settings.baselineS());
      long nextProgress = startMs + PROGRESS_MS;
      while (System.currentTimeMillis() < end) {
        sleepUntil(Math.min(nextProgress, end));
        if (System.currentTimeMillis() >= nextProgress) {
          progress();
          while (nextProgress <= System.currentTimeMillis()) {
            nextProgress += PROGRESS_MS;
          }
        }
        // a baseline of a server that is down or just starting would measure the restart, not the level
        if (baseline == null && System.currentTimeMillis() >= baselineAt && !restarting.get()) {
          baseline = sampleAfterGc("baseline");
          if (baseline.values().stream().anyMatch(sample -> sample.heapKb() < 0 || sample.fds() < 0)) {
            System.out.println("baseline incomplete (a server is not answering); again in 10 s");
            baseline = null;
          }
        }
      }
      loadOn.set(false);
      vertx.cancelTimer(timer);
      heap.interrupt();
      heap.join();
      restartsOn.set(false);
      restarter.interrupt();
      restarter.join();
      System.out.println("load ended; waiting for every server, the answers in flight and the deliveries to settle");
      settings.names().forEach(this::awaitHealthy);
      awaitInFlight();
      MessageLedger.Result result = settle();
      hubOn.set(false);
      for (Thread poller : pollers) {
        poller.join(TimeUnit.SECONDS.toMillis(20));
      }
      reconnectAll();
      Map<String, Sample> last = sampleAfterGc("end");
      return report(result, baseline, last);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 1;
    } finally {
      vertx.close().await();
    }
  }

  /**
   * Cards for every user on the servers they name, relayed to the others; sessions for senders on s1/s2 and
   * recipients on s3/s4, alternating.
   */
  private void prepare() {
    String tag = Long.toString(System.currentTimeMillis() % 1_000_000, 36);
    List<Map.Entry<String, String>> names = new ArrayList<>();
    List<ShineClient> admins = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      ShineClient admin = ShineClient.connect(vertx, settings.url(i)).await();
      admins.add(admin);
      names.add(Map.entry(admin.serverLogin("soak").await(), settings.url(i)));
    }
    List<Map.Entry<String, String>> senderRoutes = names.subList(0, 2);
    List<Map.Entry<String, String>> recipientRoutes = names.subList(2, 4);
    System.out.printf(Locale.ROOT, "registering %d senders (routes %s) and %d recipients (routes %s)%n",
        settings.users(), senderRoutes, settings.users(), recipientRoutes);
    List<UserPair> registered = new ArrayList<>();
    try (Registrar registrar = new Registrar(vertx)) {
      for (int i = 0; i < settings.users(); i++) {
        UserPair pair = new UserPair(i, "k" + tag + "-a" + i, KeyFile.generate("k" + tag + "-a" + i),
            "k" + tag + "-b" + i, KeyFile.generate("k" + tag + "-b" + i));
        Future.all(registrar.publish(pair.sender, pair.senderKey, senderRoutes),
            registrar.publish(pair.recipient, pair.recipientKey, recipientRoutes)).await();
        registered.add(pair);
      }
      registrar.awaitKnown(names.stream().map(Map.Entry::getValue).toList(), CARDS_SPREAD_MS);
    }
    for (UserPair pair : registered) {
      int i = pair.index;
      String senderUrl = settings.url(i % 2);
      String recipientUrl = settings.url(2 + i % 2);
      pair.senderSession = new Resender(vertx, null, () -> login(senderUrl, pair.sender, pair.senderKey, null),
          POLICY);
      AtomicInteger sessions = new AtomicInteger();
      pair.recipientSession = new Resender(vertx, null, () -> login(recipientUrl, pair.recipient, pair.recipientKey,
          pair.recipient + "#" + sessions.incrementAndGet()), POLICY);
      Future.all(pair.senderSession.session(), pair.recipientSession.session()).await();
      pairs.add(pair);
    }
    admins.forEach(ShineClient::close);
  }

  /**
   * Every user's session open again before the end sample, as at the baseline: a session lost in the last restart
   * is otherwise reopened only by that user's next request, and the end would count fewer descriptors than exist
   * under load.
   */
  private void reconnectAll() {
    List<Future<?>> sessions = new ArrayList<>();
    for (UserPair pair : pairs) {
      sessions.add(pair.senderSession.session());
      sessions.add(pair.recipientSession.session());
    }
    Future.join(sessions).otherwiseEmpty().await();
  }

  /** A logged-in session; with {@code pushesAs}, its IncomingDirectMessage pushes go to the ledger under that id. */
  private Future<ShineClient> login(String url, String login, KeyFile key, String pushesAs) {
    return ShineClient.connect(vertx, url).compose(client -> {
      if (pushesAs != null) {
        client.onEvent(event -> onPush(pushesAs, event));
      }
      return client.login(login, key).map(client);
    });
  }

  private void onPush(String sessionId, JsonNode event) {
    if (!"IncomingDirectMessage".equals(event.path("op").asText())) {
      return;
    }
    DmContainer container = container(event.path("payload").path("blobB64").asText());
    if (container != null) {
      ledger.pushed(sessionId, container.baseKey(), container.revision());
    }
  }

  private static DmContainer container(String blobB64) {
    try {
      return DmCodec.parse(Base64.getDecoder().decode(blobB64));
    } catch (DmFormatException | IllegalArgumentException e) {
      return null;
    }
  }

  /** Every 100 ms, a tenth of the second's operations, while fewer than {@link #MAX_IN_FLIGHT} are unanswered. */
  private void tick() {
    if (!loadOn.get()) {
      return;
    }
    double perTick = settings.rate() / 10.0;
    int count = (int) perTick + (ThreadLocalRandom.current().nextDouble() < perTick - (int) perTick ? 1 : 0);
    for (int i = 0; i < count && inFlight.get() < MAX_IN_FLIGHT; i++) {
      double pick = ThreadLocalRandom.current().nextDouble();
      if (pick < 0.5 || recentCount.get() == 0) {
        send();
      } else if (pick < 0.7) {
        withRecent("edit", this::edit);
      } else if (pick < 0.9) {
        withRecent("receipt", this::receipt);
      } else {
        withRecent("delete", this::delete);
      }
    }
  }

  private void send() {
    UserPair pair = pairs.get(ThreadLocalRandom.current().nextInt(pairs.size()));
    long createdAtMs = pair.nextCreatedAtMs();
    long nonce = ShineClient.randomNonce();
    SignedPair signed = ShineClient.signPair(pair.sender, pair.senderKey, pair.recipient, createdAtMs, nonce, 0,
        body(0));
    String baseKey = signed.incoming().baseKey();
    ledger.sent(baseKey, pair.sender, pair.recipient);
    track("send", pair.senderSession.sendPair(signed)).onSuccess(ok -> {
      ledger.accepted(baseKey, 0);
      remember(new Live(pair, createdAtMs, nonce, baseKey));
    });
  }

  private void edit(Live live) {
    long revision = live.revision + 1;
    SignedPair signed = ShineClient.signPair(live.pair.sender, live.pair.senderKey, live.pair.recipient,
        live.createdAtMs, live.nonce, revision, body(revision));
    finish(live, track("edit", live.pair.senderSession.sendPair(signed)).onSuccess(ok -> {
      live.revision = revision;
      ledger.accepted(live.baseKey, revision);
    }));
  }

  private void receipt(Live live) {
    if (live.read) {
      live.busy.set(false);
      return;
    }
    DmContainer receipt = ShineClient.signReceipt(live.pair.recipient, live.pair.recipientKey, live.pair.sender,
        live.baseKey, System.currentTimeMillis());
    ObjectNode payload = ShineClient.object().put("receiptBlobB64",
        Base64.getEncoder().encodeToString(receipt.bytes()));
    finish(live, track("receipt", live.pair.recipientSession.untilAnswered(client ->
        client.request("SendReadReceipt", payload, POLICY.answerTimeoutMs()))).onSuccess(ok -> {
          live.read = true;
          ledger.read(live.baseKey);
        }));
  }

  private void delete(Live live) {
    boolean bySender = ThreadLocalRandom.current().nextBoolean();
    UserPair pair = live.pair;
    DmContainer tombstone = bySender
        ? ShineClient.signTombstone(pair.sender, pair.senderKey, pair.recipient, live.baseKey + "|2",
            System.currentTimeMillis())
        : ShineClient.signTombstone(pair.recipient, pair.recipientKey, pair.sender, live.baseKey + "|1",
            System.currentTimeMillis());
    ObjectNode payload = ShineClient.object().put("tombstoneBlobB64",
        Base64.getEncoder().encodeToString(tombstone.bytes()));
    Resender session = bySender ? pair.senderSession : pair.recipientSession;
    live.deleted = true;
    finish(live, track("delete", session.untilAnswered(client ->
        client.request("DeleteMessage", payload, POLICY.answerTimeoutMs())))
        .onSuccess(ok -> ledger.deleted(live.baseKey, bySender)));
  }

  /** Frees the message for the next operation; a change given up unanswered leaves the ledger unsure of it. */
  private void finish(Live live, Future<JsonNode> change) {
    change.onComplete(ar -> {
      if (ar.failed()) {
        ledger.uncertain(live.baseKey);
      }
      live.busy.set(false);
    });
  }

  private static byte[] body(long revision) {
    return ("{\"v\":1,\"text\":\"soak r" + revision + " " + ShineClient.randomNonce() + "\"}")
        .getBytes(StandardCharsets.UTF_8);
  }

  private void remember(Live live) {
    recent.set((int) (recentCount.getAndIncrement() % RECENT), live);
  }

  /** Runs {@code operation} on a random recent message that is free and not deleted (none found: a send). */
  private void withRecent(String kind, java.util.function.Consumer<Live> operation) {
    long filled = Math.min(recentCount.get(), RECENT);
    for (int attempt = 0; attempt < 8; attempt++) {
      Live live = recent.get(ThreadLocalRandom.current().nextInt((int) filled));
      if (live != null && !live.deleted && live.busy.compareAndSet(false, true)) {
        if (live.deleted) {
          live.busy.set(false);
          continue;
        }
        operation.accept(live);
        return;
      }
    }
    ops.computeIfAbsent(kind + "-skipped", k -> new LongAdder()).increment();
  }

  private Future<JsonNode> track(String kind, Future<JsonNode> operation) {
    inFlight.incrementAndGet();
    ops.computeIfAbsent(kind, k -> new LongAdder()).increment();
    return operation.onComplete(ar -> {
      inFlight.decrementAndGet();
      if (ar.failed()) {
        error(kind, ar.cause());
      }
    });
  }

  private void error(String kind, Throwable failure) {
    String code = failure instanceof ShineClientException answer
        ? (answer.status() == 0 ? answer.code() : answer.status() + " " + answer.code())
        : failure.getClass().getSimpleName();
    errors.computeIfAbsent(kind + ": " + code, k -> new LongAdder()).increment();
  }

  // ---- hub polls -------------------------------------------------------------------------------------------------

  /** One thread per polling recipient: long polls on its other server's hub, each event acked after it is seen. */
  private List<Thread> startHubPollers() {
    List<Thread> pollers = new ArrayList<>();
    for (int i = 0; i < settings.hubUsers(); i++) {
      UserPair pair = pairs.get(i);
      String httpUrl = httpOf(settings.url(2 + (i + 1) % 2));
      HubClient hub = new HubClient(httpUrl);
      HubClient.Tokens tokens;
      try {
        tokens = hub.login(pair.recipient, pair.recipientKey, null);
      } catch (IOException | InterruptedException e) {
        throw new IllegalStateException("hub login of " + pair.recipient + " at " + httpUrl + " failed", e);
      }
      HubClient.Tokens first = tokens;
      pollers.add(thread("soak-hub-" + i, () -> poll(hub, pair, first)));
    }
    return pollers;
  }

  private void poll(HubClient hub, UserPair pair, HubClient.Tokens first) {
    HubClient.Tokens tokens = first;
    while (hubOn.get()) {
      try {
        HttpResponse<String> response = hub.poll(tokens.accessToken(), 5);
        ops.computeIfAbsent("hub-poll", k -> new LongAdder()).increment();
        switch (response.statusCode()) {
          case 200 -> onHubEvent(hub, tokens, response);
          case 204, 408 -> { }
          case 401 -> tokens = renew(hub, pair, tokens);
          default -> hubError("hub " + response.statusCode());
        }
      } catch (IOException e) {
        hubError("hub unreachable");
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private HubClient.Tokens renew(HubClient hub, UserPair pair, HubClient.Tokens tokens)
      throws IOException, InterruptedException {
    HubClient.Tokens renewed = hub.refresh(tokens.refreshToken());
    return renewed != null ? renewed : hub.login(pair.recipient, pair.recipientKey, null);
  }

  private void onHubEvent(HubClient hub, HubClient.Tokens tokens, HttpResponse<String> response)
      throws IOException, InterruptedException {
    String deliveryId = response.headers().firstValue("X-Delivery-Id").orElse("");
    JsonNode event = Json.MAPPER.readTree(response.body());
    Long id = Long.parseLong(deliveryId);
    Long before = hubDeliveries.putIfAbsent(event.path("eventKey").asText(), id);
    if (before != null && !before.equals(id)) {
      hubDuplicates.increment();
    }
    ops.computeIfAbsent("hub-event", k -> new LongAdder()).increment();
    if ("IncomingDirectMessage".equals(event.path("op").asText())) {
      DmContainer container = container(event.path("payload").path("blobB64").asText());
      if (container != null) {
        hubMessages.add(container.baseKey() + "|" + container.revision());
      }
    }
    HttpResponse<String> ack = hub.ack(tokens.accessToken(), deliveryId);
    if (ack.statusCode() != 200) {
      hubError("hub ack " + ack.statusCode());
    }
  }

  /** A failed poll: counted, and the next one a second later (the server may be restarting). */
  private void hubError(String code) {
    errors.computeIfAbsent(code, k -> new LongAdder()).increment();
    sleepQuietly(1_000);
  }

  // ---- restarts --------------------------------------------------------------------------------------------------

  /** Every {@code --restart-every-s}, the next server of the rotation; a restart under way is never cut short. */
  private void restartLoop() {
    if (settings.restartEveryS() == 0 || settings.restartOrder().isEmpty()) {
      return;
    }
    int next = 0;
    long at = startMs;
    while (restartsOn.get()) {
      at += TimeUnit.SECONDS.toMillis(settings.restartEveryS());
      try {
        sleepUntil(at);
      } catch (InterruptedException e) {
        return;
      }
      if (!restartsOn.get()) {
        return;
      }
      // a stop asked for from here on waits for this restart to end instead of leaving the server half-restarted
      Thread.interrupted();
      restarting.set(true);
      try {
        restart(settings.restartOrder().get(next++ % settings.restartOrder().size()));
      } finally {
        restarting.set(false);
      }
    }
  }

  /** SIGTERM, wait for the exit (60 s, then SIGKILL), start the same command again and wait for /health. */
  private void restart(String name) {
    long began = System.currentTimeMillis();
    ProcessHandle.of(pidOf(name)).ifPresent(process -> {
      process.destroy();
      try {
        process.onExit().get(60, TimeUnit.SECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        System.out.println("restart " + name + ": no exit 60 s after SIGTERM; killing it");
        process.destroyForcibly();
      } catch (java.util.concurrent.ExecutionException e) {
        throw new IllegalStateException(e);
      } catch (InterruptedException e) {
        Thread.interrupted();
      }
    });
    long stopped = System.currentTimeMillis();
    start(name);
    awaitHealthy(name);
    restarts.increment();
    System.out.printf(Locale.ROOT, "restart %s: stopped in %.1f s, healthy %.1f s later (pid %d)%n", name,
        (stopped - began) / 1000.0, (System.currentTimeMillis() - stopped) / 1000.0, pidOf(name));
  }

  private void start(String name) {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(settings.javaOpts());
    command.addAll(List.of("-jar", ownJar(), "server", "--config",
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

  private static String ownJar() {
    try {
      return new File(SoakCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getPath();
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  private long pidOf(String name) {
    try {
      return Long.parseLong(Files.readString(settings.runDir().resolve(name + ".pid")).trim());
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
  }

  private void awaitHealthy(String name) {
    URI health = URI.create(httpOf(settings.servers().get(name)) + "/health");
    long deadline = System.currentTimeMillis() + 120_000;
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
      sleepQuietly(500);
    }
    System.out.println(name + " is not healthy 120 s after its start");
  }

  private static String httpOf(String wsUrl) {
    return wsUrl.replaceFirst("^ws", "http").replaceAll("/ws$", "");
  }

  // ---- samples, progress, settling, report -----------------------------------------------------------------------

  /** Heap after a full GC (jcmd) and open descriptors of one server process. */
  private record Sample(long pid, long heapKb, long fds) {
  }

  private Map<String, Sample> sampleAfterGc(String label) {
    Map<String, Sample> samples = new LinkedHashMap<>();
    for (String name : settings.names()) {
      long pid = pidOf(name);
      long heap = heapAfterGc(pid);
      heapKb.put(name, heap);
      samples.put(name, new Sample(pid, heap, fds(pid)));
    }
    StringBuilder line = new StringBuilder(label).append(" at ").append(elapsed()).append(':');
    samples.forEach((name, s) -> line.append(String.format(Locale.ROOT, " %s heap %s fds %d", name,
        mb(s.heapKb()), s.fds())));
    System.out.println(line);
    return samples;
  }

  private static long heapAfterGc(long pid) {
    if (pid <= 0 || jcmd(pid, "GC.run") == null) {
      return -1;
    }
    String info = jcmd(pid, "GC.heap_info");
    Matcher used = info == null ? null : HEAP_USED.matcher(info);
    return used != null && used.find() ? Long.parseLong(used.group(1)) : -1;
  }

  private static String jcmd(long pid, String command) {
    try {
      Process process = new ProcessBuilder("jcmd", Long.toString(pid), command).redirectErrorStream(true).start();
      String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0 ? out : null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  private static long fds(long pid) {
    String[] entries = pid <= 0 ? null : new File("/proc/" + pid + "/fd").list();
    return entries == null ? -1 : entries.length;
  }

  /** Heap after GC of every server each minute, on its own thread: jcmd takes seconds on a busy machine. */
  private void heapLoop() {
    while (loadOn.get()) {
      for (String name : settings.names()) {
        heapKb.put(name, heapAfterGc(pidOf(name)));
      }
      try {
        sleepUntil(System.currentTimeMillis() + HEAP_SAMPLE_EVERY_MS);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void progress() {
    StringBuilder line = new StringBuilder(elapsed()).append(" ops ").append(counts(ops))
        .append(" in flight ").append(inFlight.get()).append(" errors ").append(counts(errors))
        .append(" restarts ").append(restarts.sum()).append(" |");
    for (String name : settings.names()) {
      long pid = pidOf(name);
      line.append(String.format(Locale.ROOT, " %s heap %s fds %d", name, mb(heapKb.getOrDefault(name, -1L)),
          fds(pid)));
    }
    System.out.println(line);
  }

  private String elapsed() {
    long s = (System.currentTimeMillis() - startMs) / 1000;
    return String.format(Locale.ROOT, "%02d:%02d", s / 60, s % 60);
  }

  private static String counts(Map<String, LongAdder> counters) {
    Map<String, Long> sorted = new TreeMap<>();
    counters.forEach((k, v) -> sorted.put(k, v.sum()));
    return sorted.toString();
  }

  private static String mb(long kb) {
    return kb < 0 ? "?" : String.format(Locale.ROOT, "%.1fMB", kb / 1024.0);
  }

  private void awaitInFlight() {
    long deadline = System.currentTimeMillis() + 600_000;
    while (inFlight.get() > 0 && System.currentTimeMillis() < deadline) {
      sleepQuietly(200);
    }
  }

  /**
   * Reads every conversation on all four servers until the ledger is clean, every sender copy is delivered and the
   * hub pollers saw every final revision sent to them, or {@code --settle-s} runs out; the last reading counts.
   */
  private MessageLedger.Result settle() {
    long deadline = System.currentTimeMillis() + TimeUnit.SECONDS.toMillis(settings.settleS());
    List<String> names = settings.names();
    Map<String, ShineClient> readers = new ConcurrentHashMap<>();
    try {
      while (true) {
        ledger.clearObservations();
        for (UserPair pair : pairs) {
          for (int s = 0; s < 4; s++) {
            boolean senderSide = s < 2;
            String name = names.get(s);
            String owner = senderSide ? pair.sender : pair.recipient;
            ShineClient reader = reader(readers, name + "|" + owner, settings.url(s), owner,
                senderSide ? pair.senderKey : pair.recipientKey);
            ledger.observe(name, senderSide, history(reader, senderSide ? pair.recipient : pair.sender));
          }
        }
        MessageLedger.Result result = ledger.result(names.subList(2, 4), names.subList(0, 2));
        long hubMissing = hubMissing();
        boolean settled = result.ok() && result.unsettled(Set.of("delivered")) == 0 && hubMissing == 0
            && hubDuplicates.sum() == 0;
        if (settled || System.currentTimeMillis() > deadline) {
          return result;
        }
        System.out.printf(Locale.ROOT, "%s settling: lost %d, not delivered yet %d, hub missing %d, wrong entries %s%n",
            elapsed(), result.lost(), result.unsettled(Set.of("delivered")), hubMissing, result.problems());
        sleepQuietly(5_000);
      }
    } finally {
      readers.values().forEach(ShineClient::close);
    }
  }

  private ShineClient reader(Map<String, ShineClient> readers, String id, String url, String login, KeyFile key) {
    ShineClient reader = readers.get(id);
    if (reader == null || reader.closed()) {
      reader = login(url, login, key, null).await();
      readers.put(id, reader);
    }
    return reader;
  }

  /** The owner's whole conversation with {@code peer}, newest first, page by page. */
  private static List<JsonNode> history(ShineClient reader, String peer) {
    List<JsonNode> entries = new ArrayList<>();
    long before = Long.MAX_VALUE;
    while (true) {
      JsonNode page = reader.request("GetDirectMessages", ShineClient.object().put("peer", peer)
          .put("beforeCreatedAtMs", before).put("limit", 200), 30_000).await().path("messages");
      page.forEach(entries::add);
      if (page.size() < 200) {
        return entries;
      }
      before = Long.parseLong(page.get(page.size() - 1).path("baseKey").asText().split("\\|")[2]);
    }
  }

  /** Accepted messages to polling users whose final revision no hub event carried. */
  private long hubMissing() {
    Set<String> polling = new java.util.HashSet<>();
    for (int i = 0; i < settings.hubUsers(); i++) {
      polling.add(pairs.get(i).recipient);
    }
    return ledger.messages().stream()
        .filter(m -> m.accepted() && !m.uncertain && polling.contains(m.recipient))
        .filter(m -> !hubMessages.contains(m.baseKey + "|" + m.acceptedRevision.get()))
        .count();
  }

  private int report(MessageLedger.Result result, Map<String, Sample> baseline, Map<String, Sample> last) {
    System.out.println();
    System.out.println("== soak ledger ==");
    result.lines().forEach(System.out::println);
    long notDelivered = result.unsettled(Set.of("delivered"));
    long hubMissing = hubMissing();
    System.out.printf(Locale.ROOT, "operations %s; errors %s; restarts %d%n", counts(ops), counts(errors),
        restarts.sum());
    System.out.printf(Locale.ROOT, "hub: %d events to %d polling users, %d repeated under a new delivery id, %d"
        + " final revisions never polled%n", hubDeliveries.size(), settings.hubUsers(), hubDuplicates.sum(),
        hubMissing);
    boolean grew = false;
    System.out.println("== resources: heap after GC and descriptors, baseline → end (bound +20 %) ==");
    for (String name : settings.names()) {
      Sample before = baseline == null ? null : baseline.get(name);
      Sample after = last.get(name);
      boolean heapGrew = before != null && before.heapKb() > 0 && after.heapKb() > before.heapKb() * GROWTH_BOUND;
      boolean fdsGrew = before != null && before.fds() > 0 && after.fds() > before.fds() * GROWTH_BOUND;
      boolean unknown = before == null || before.heapKb() < 0 || after.heapKb() < 0 || after.fds() < 0;
      grew |= heapGrew || fdsGrew || unknown;
      System.out.printf(Locale.ROOT, "%s heap %s → %s (%s)  fds %d → %d (%s)%s%n", name,
          before == null ? "?" : mb(before.heapKb()), mb(after.heapKb()), ratio(before == null ? -1 : before.heapKb(),
              after.heapKb()), before == null ? -1 : before.fds(), after.fds(),
          ratio(before == null ? -1 : before.fds(), after.fds()),
          heapGrew || fdsGrew ? "  GREW BEYOND THE BOUND" : unknown ? "  NOT MEASURED" : "");
    }
    boolean ok = result.ok() && notDelivered == 0 && hubMissing == 0 && hubDuplicates.sum() == 0 && !grew;
    System.out.printf(Locale.ROOT, "RESULT soak=%s sent=%d accepted=%d delivered=%d lost=%d duplicated=%d"
            + " not_delivered=%d hub_missing=%d hub_duplicates=%d restarts=%d resources=%s%n", ok ? "pass" : "fail",
        result.sent(), result.accepted(), result.delivered(), result.lost(),
        result.duplicatesInHistory() + result.duplicatePushes(), notDelivered, hubMissing, hubDuplicates.sum(),
        restarts.sum(), grew ? "grew" : "within");
    return ok ? 0 : 1;
  }

  private static String ratio(long before, long after) {
    return before <= 0 || after < 0 ? "?" : String.format(Locale.ROOT, "%+.0f %%", 100.0 * (after - before) / before);
  }

  private static Thread thread(String name, Runnable body) {
    Thread thread = new Thread(body, name);
    thread.setDaemon(true);
    thread.start();
    return thread;
  }

  private static void sleepUntil(long atMs) throws InterruptedException {
    long wait = atMs - System.currentTimeMillis();
    if (wait > 0) {
      Thread.sleep(wait);
    }
  }

  private static void sleepQuietly(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
