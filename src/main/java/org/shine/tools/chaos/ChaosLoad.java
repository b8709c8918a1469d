package org.shine.tools.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.client.ShineClientException;
import org.shine.server.dm.KeyFile;
import org.shine.tools.ledger.LedgerTotals;
import org.shine.tools.ledger.MessageLedger;
import org.shine.tools.support.Registrar;

/**
 * {@code chaos load}: the load of one fault scenario and its ledger. Registers fresh senders and recipients, holds a
 * live session of every recipient on each of the recipient's servers, sends signed pairs at a steady rate while the
 * script injects its faults, resends a pair whose answer said nothing about storage (a closed connection, a
 * timeout, 429, 500, 503) with the same bytes until it is answered 200 or refused, then waits until every accepted
 * pair is in the recipient's history on every recipient server and in a final state on every sender server (or
 * the settle time is over) and prints the {@link MessageLedger}'s {@code LEDGER} line ({@link LedgerTotals}). Exit
 * code 0 only when nothing was lost, duplicated, left unanswered or left unsettled. Its options are {@link
 * ChaosSettings}, its sessions {@link ChaosSession}; the load, the resends and the looks at the histories stay in
 * this one class (under 400 lines) because they share the pairs in flight, the deadlines and the ledger.
 *
 * <p>It prints {@code CHAOS <phase>} lines as it goes ({@code ready}, {@code load-started}, {@code load-ended},
 * {@code faults-over}, {@code answered}, {@code settled}), so the script can time its faults against the load; with
 * {@code --faults-done FILE} the settle time counts from when the script has created FILE.
 */
final class ChaosLoad {
  /** The longest a load waits for the script to say its faults are over. */
  private static final long FAULTS_WAIT_S = 900;
  /** How long the servers get to relay the cards they took to the others. */
  private static final long CARDS_SPREAD_MS = 60_000;
  private static final Set<Integer> FINAL_REFUSALS = Set.of(400, 403, 404, 409, 413, 421);
  private static final long RESEND_DELAY_MS = 300;
  private static final int PAGE = 200;

  private final Vertx vertx;
  private final ChaosSettings settings;
  private final MessageLedger ledger = new MessageLedger();
  private final List<String> recipientLogins;
  private final List<String> senderLogins;
  private final List<Server> senderServers;
  private final List<Server> recipientServers;
  private final List<User> users = new ArrayList<>();
  private final AtomicLong unfinished = new AtomicLong();
  /** Until when (nanoTime) a pair without a settling answer is sent again. */
  private volatile long resendUntil = Long.MAX_VALUE;
  private boolean faultsSeenOver;

  /** One server of the scenario: its login, the nodes clients use, the URL its route names. */
  private record Server(String login, List<String> nodes, String routeUrl) {
  }

  /** A sender and its own recipient, with their sessions (index = server in the settings' order). */
  private static final class User {
    final String sender;
    final KeyFile senderKey;
    final String recipient;
    final KeyFile recipientKey;
    final List<ChaosSession> senderSessions = new ArrayList<>();
    final List<ChaosSession> recipientSessions = new ArrayList<>();
    final AtomicInteger inFlight = new AtomicInteger();
    long lastCreatedAtMs;

    User(String sender, String recipient) {
      this.sender = sender;
      this.senderKey = KeyFile.generate(sender);
      this.recipient = recipient;
      this.recipientKey = KeyFile.generate(recipient);
    }
  }

  private ChaosLoad(Vertx vertx, ChaosSettings settings, List<Server> senderServers, List<Server> recipientServers) {
    this.vertx = vertx;
    this.settings = settings;
    this.senderServers = senderServers;
    this.recipientServers = recipientServers;
    this.recipientLogins = recipientServers.stream().map(Server::login).toList();
    this.senderLogins = senderServers.stream().map(Server::login).toList();
  }

  static int run(ChaosSettings settings) {
    Vertx vertx = Vertx.vertx();
    try {
      List<Server> senderServers = servers(vertx, settings.senderNodes(), settings.routes());
      List<Server> recipientServers = servers(vertx, settings.recipientNodes(), settings.routes());
      ChaosLoad load = new ChaosLoad(vertx, settings, senderServers, recipientServers);
      load.register();
      return load.runLoad();
    } finally {
      vertx.close().await();
    }
  }

  /** Each server's login, asked of its first node that answers. */
  private static List<Server> servers(Vertx vertx, List<List<String>> nodesList, Map<String, String> routes) {
    List<Server> servers = new ArrayList<>();
    for (List<String> nodes : nodesList) {
      ShineClient admin = ShineClient.connect(vertx, nodes.get(0)).await();
      String login = admin.serverLogin("chaos").await();
      admin.close();
      servers.add(new Server(login, nodes, routes.getOrDefault(login, nodes.get(0))));
    }
    return servers;
  }

  private void register() {
    List<Map.Entry<String, String>> senderRoutes = senderServers.stream()
        .map(s -> Map.entry(s.login(), s.routeUrl())).toList();
    List<Map.Entry<String, String>> recipientRoutes = recipientServers.stream()
        .map(s -> Map.entry(s.login(), s.routeUrl())).toList();
    // each card on the servers it names (their first nodes), then relayed to the others (PROTOCOL §13 admission)
    List<String> senderNodes = senderServers.stream().map(s -> s.nodes().get(0)).toList();
    List<String> recipientNodes = recipientServers.stream().map(s -> s.nodes().get(0)).toList();
    try (Registrar registrar = new Registrar(vertx)) {
      for (int i = 0; i < settings.users(); i++) {
        User user = new User("c" + settings.tag() + "-s" + i, "c" + settings.tag() + "-r" + i);
        Future.all(registrar.publish(user.sender, user.senderKey, senderRoutes, senderNodes),
            registrar.publish(user.recipient, user.recipientKey, recipientRoutes, recipientNodes)).await();
        users.add(user);
      }
      registrar.awaitKnown(concat(senderServers, recipientServers).stream().map(s -> s.nodes().get(0)).distinct()
          .toList(), CARDS_SPREAD_MS);
    }
    List<Future<?>> logins = new ArrayList<>();
    for (int i = 0; i < users.size(); i++) {
      User user = users.get(i);
      for (Server server : senderServers) {
        ChaosSession session = new ChaosSession(vertx, server.nodes(), user.sender, user.senderKey, (id, f) -> { });
        user.senderSessions.add(session);
        // clients of a server with several nodes spread over them
        logins.add(session.start(i));
      }
      for (Server server : recipientServers) {
        ChaosSession session = new ChaosSession(vertx, server.nodes(), user.recipient, user.recipientKey,
            this::onRecipientEvent);
        user.recipientSessions.add(session);
        logins.add(session.start(i));
      }
    }
    Future.all(logins).await();
    System.out.printf(Locale.ROOT, "CHAOS ready: %d senders on %s, %d recipients on %s, live sessions on every"
        + " server of each%n", users.size(), names(senderServers), users.size(), names(recipientServers));
  }

  private static List<Server> concat(List<Server> a, List<Server> b) {
    List<Server> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }

  private static String names(List<Server> servers) {
    return servers.stream().map(s -> s.login() + (s.nodes().size() > 1 ? " (" + s.nodes().size() + " nodes)" : ""))
        .toList().toString();
  }

  private void onRecipientEvent(long sessionId, JsonNode frame) {
    if ("IncomingDirectMessage".equals(frame.path("op").asText())) {
      // every pair here is revision 0
      String messageKey = frame.path("payload").path("messageKey").asText();
      ledger.pushed(Long.toString(sessionId), MessageLedger.baseKeyOf(messageKey), 0);
    }
  }

  private int runLoad() {
    long start = System.nanoTime();
    long end = start + TimeUnit.SECONDS.toNanos(settings.seconds());
    if (settings.faultsDone() == null) {
      resendUntil = end + TimeUnit.SECONDS.toNanos(settings.settleS());
    }
    long intervalMs = Math.max(1, settings.users() * 1000L / settings.rate());
    System.out.printf(Locale.ROOT, "CHAOS load-started: %d pairs/s for %d s (one pair every %d ms per sender, at"
        + " most %d unsettled each)%n", settings.rate(), settings.seconds(), intervalMs, settings.window());
    List<Long> timers = new ArrayList<>();
    for (User user : users) {
      timers.add(vertx.setPeriodic(intervalMs, id -> {
        if (System.nanoTime() < end && user.inFlight.get() < settings.window()) {
          launch(user);
        }
      }));
    }
    sleepUntil(end);
    timers.forEach(vertx::cancelTimer);
    System.out.printf(Locale.ROOT, "CHAOS load-ended: %d pairs sent, %d waiting for an answer; answers so far %s%n",
        totals().sent(), unfinished.get(), totals().answers());
    // the answers may need the faults to be over (a server back): resends go on until then, and a while after
    while (unfinished.get() > 0 && System.nanoTime() < resendUntil) {
      faultsOver();
      sleepMillis(100);
    }
    System.out.printf(Locale.ROOT, "CHAOS answered: %d still unanswered%n", unfinished.get());
    awaitFaultsOver();
    long settleStart = System.nanoTime();
    long settleEnd = settleStart + TimeUnit.SECONDS.toNanos(settings.settleS());
    boolean settled = false;
    while (!settled) {
      check();
      settled = ledger.settled(recipientLogins, senderLogins);
      if (settled || System.nanoTime() >= settleEnd) {
        break;
      }
      sleepMillis(1000);
    }
    System.out.printf(Locale.ROOT, "CHAOS %s after %.1f s%n", settled ? "settled" : "not settled",
        (System.nanoTime() - settleStart) / 1e9);
    // pushes that come late still count as duplicates: one more look after a pause
    sleepMillis(1000);
    check();
    users.forEach(u -> {
      u.senderSessions.forEach(ChaosSession::stop);
      u.recipientSessions.forEach(ChaosSession::stop);
    });
    LedgerTotals totals = totals();
    System.out.println(totals.line(settings.scenario()));
    return totals.clean() ? 0 : 1;
  }

  /** Waits (bounded) until the script's faults are over, when it is to say so. */
  private void awaitFaultsOver() {
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(FAULTS_WAIT_S);
    while (!faultsOver() && System.nanoTime() < giveUp) {
      sleepMillis(200);
    }
  }

  /** True once the faults are over (or nobody says when); the first time, the time for resends starts. */
  private boolean faultsOver() {
    if (settings.faultsDone() == null || faultsSeenOver) {
      return true;
    }
    if (!Files.exists(settings.faultsDone())) {
      return false;
    }
    faultsSeenOver = true;
    resendUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(settings.settleS());
    System.out.printf(Locale.ROOT, "CHAOS faults-over: %d pairs waiting for an answer%n", unfinished.get());
    return true;
  }

  private void launch(User user) {
    long createdAtMs = Math.max(System.currentTimeMillis(), user.lastCreatedAtMs + 1);
    user.lastCreatedAtMs = createdAtMs;
    byte[] body = ("{\"v\":1,\"text\":\"chaos " + createdAtMs + "\"}").getBytes(StandardCharsets.UTF_8);
    SignedPair pair = ShineClient.signPair(user.sender, user.senderKey, user.recipient, createdAtMs,
        ShineClient.randomNonce(), 0, body);
    String baseKey = pair.incoming().baseKey();
    ledger.sent(baseKey);
    ObjectNode payload = ShineClient.object()
        .put("incomingBlobB64", Base64.getEncoder().encodeToString(pair.incoming().bytes()))
        .put("outgoingBlobB64", Base64.getEncoder().encodeToString(pair.outgoing().bytes()));
    List<ChaosSession> targets = settings.bothSenders() ? user.senderSessions : List.of(user.senderSessions.get(0));
    AtomicInteger open = new AtomicInteger(targets.size());
    user.inFlight.incrementAndGet();
    unfinished.incrementAndGet();
    Runnable done = () -> {
      if (open.decrementAndGet() == 0) {
        user.inFlight.decrementAndGet();
        unfinished.decrementAndGet();
      }
    };
    for (ChaosSession target : targets) {
      send(target, baseKey, payload, done);
    }
  }

  /** Sends the same bytes until an answer settles them, or the time for resends is over. */
  private void send(ChaosSession session, String baseKey, JsonNode payload, Runnable done) {
    session.request("SendMessagePair", payload, settings.requestTimeoutMs()).onComplete(ar -> {
      if (ar.succeeded()) {
        ledger.accepted(baseKey);
        done.run();
        return;
      }
      if (ar.cause() instanceof ShineClientException e && FINAL_REFUSALS.contains(e.status())) {
        ledger.rejected(baseKey, e.status(), e.code());
        done.run();
        return;
      }
      ledger.retried(ar.cause() instanceof ShineClientException e
          ? (e.status() == 0 ? "" : e.status() + " ") + e.code() : ar.cause().getClass().getSimpleName());
      if (System.nanoTime() >= resendUntil) {
        done.run();
        return;
      }
      vertx.setTimer(RESEND_DELAY_MS, id -> send(session, baseKey, payload, done));
    });
  }

  /** One look at every history: the recipients' copies on each recipient server, the senders' states. */
  private void check() {
    List<Future<?>> looks = new ArrayList<>();
    for (User user : users) {
      for (int i = 0; i < recipientServers.size(); i++) {
        ChaosSession session = user.recipientSessions.get(i);
        String server = recipientServers.get(i).login();
        looks.add(history(session, user.sender).onSuccess(entries -> ledger.observe(server, false,
            withDirection(entries, "incoming"))));
      }
      for (int i = 0; i < senderServers.size(); i++) {
        ChaosSession session = user.senderSessions.get(i);
        String server = senderServers.get(i).login();
        looks.add(history(session, user.recipient).onSuccess(entries -> ledger.observe(server, true,
            withDirection(entries, "outgoing"))));
      }
    }
    // a server that is down now is simply looked at again in the next round
    Future.join(looks).otherwiseEmpty().await();
  }

  private LedgerTotals totals() {
    return ledger.totals(recipientLogins, senderLogins);
  }

  /** The recipients' copies ({@code incoming}) or the senders' ({@code outgoing}) of a history. */
  private static List<JsonNode> withDirection(List<JsonNode> entries, String direction) {
    return entries.stream().filter(e -> direction.equals(e.path("direction").asText())).toList();
  }

  /** The whole conversation with {@code peer}, newest first, page by page. */
  private Future<List<JsonNode>> history(ChaosSession session, String peer) {
    List<JsonNode> all = new ArrayList<>();
    return page(session, peer, null, all).map(v -> all);
  }

  private Future<Void> page(ChaosSession session, String peer, Long before, List<JsonNode> all) {
    ObjectNode payload = ShineClient.object().put("peer", peer).put("limit", PAGE);
    if (before != null) {
      payload.put("beforeCreatedAtMs", before);
    }
    return session.request("GetDirectMessages", payload, settings.requestTimeoutMs()).compose(answer -> {
      JsonNode messages = answer.path("messages");
      long oldest = Long.MAX_VALUE;
      for (JsonNode message : messages) {
        all.add(message);
        oldest = Math.min(oldest, createdAtMs(message.path("baseKey").asText()));
      }
      // every sender's createdAtMs are distinct here, so paging by time skips nothing
      return messages.size() < PAGE ? Future.succeededFuture() : page(session, peer, oldest, all);
    });
  }

  private static long createdAtMs(String baseKey) {
    String[] parts = baseKey.split("\\|");
    return Long.parseLong(parts[2]);
  }

  private static void sleepUntil(long nanos) {
    long left = nanos - System.nanoTime();
    if (left > 0) {
      sleepMillis(TimeUnit.NANOSECONDS.toMillis(left) + 1);
    }
  }

  private static void sleepMillis(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
