package org.shine.tools.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.client.ShineClientException;
import org.shine.server.dm.KeyFile;

/**
 * {@code bench send --flood-rate R}: beside the measured load, an open loop of R pairs/s from flood senders on the
 * senders' server to one login whose only route is a {@link FloodPeer} (issue 16, attack 3): a tarpit that never
 * answers, or (the control) a peer that answers at once; or ({@code --flood-peer dead}, issue 18) to one login per
 * dead server, each routed only to that server, where nothing listens: every pair stays {@code accepted} and is
 * retried on the schedule. It runs from the start of the warm-up to the end of the window; its answers are counted,
 * not measured. Enough sessions share the flood that none holds more than {@value #IN_FLIGHT_PER_SESSION} requests
 * while the server takes up to {@value #ANSWER_BOUND_S} s to answer.
 */
final class FloodLoad implements AutoCloseable {
  private static final int SENDERS = 10;
  private static final int IN_FLIGHT_PER_SESSION = 50;
  private static final long ANSWER_BOUND_S = 30;
  /** The servers' default {@code delivery.callTimeoutMs}: a tarpit holds a call at most that long. */
  private static final long CALL_TIMEOUT_MS = 5_000;
  private final Vertx vertx;
  /** The listener the flood goes to; null when it goes to dead servers. */
  private final FloodPeer peer;
  private final List<Map.Entry<String, String>> deadRoutes;
  private final long rate;
  private final List<List<SignedPair>> pairs;
  private final List<List<ShineClient>> sessions;
  private final LongAdder sent = new LongAdder();
  private final Map<String, LongAdder> answers = new ConcurrentHashMap<>();
  private final AtomicLong outstanding = new AtomicLong();
  private final Promise<Void> finished = Promise.promise();

  private FloodLoad(Vertx vertx, FloodPeer peer, List<Map.Entry<String, String>> deadRoutes, long rate,
      List<List<SignedPair>> pairs, List<List<ShineClient>> sessions) {
    this.vertx = vertx;
    this.peer = peer;
    this.deadRoutes = deadRoutes;
    this.rate = rate;
    this.pairs = pairs;
    this.sessions = sessions;
  }

  /**
   * Starts the flood peer on {@code host} (unless {@code deadRoutes} are given), registers the flood's senders on
   * {@code serverUrl} and its recipients (one routed to the peer, or one routed to each dead server), logs the
   * senders in and signs {@code seconds} worth of pairs, each sender's going to the recipients in turn.
   */
  static FloodLoad prepare(Vertx vertx, String serverUrl, String tag, long rate, String host, boolean answers,
      List<Map.Entry<String, String>> deadRoutes, int seconds) {
    FloodPeer peer = deadRoutes.isEmpty() ? FloodPeer.start(vertx, host, answers, CALL_TIMEOUT_MS) : null;
    List<Map.Entry<String, String>> targets = peer == null ? deadRoutes
        : List.of(Map.entry(peer.serverLogin(), peer.url()));
    ShineClient admin = ShineClient.connect(vertx, serverUrl).await();
    try {
      String serverLogin = admin.serverLogin("bench").await();
      List<String> victims = new ArrayList<>();
      for (Map.Entry<String, String> target : targets) {
        String victim = "b" + tag + "-v" + victims.size();
        admin.publishCard(victim, KeyFile.generate(victim), List.of(target), 1).await();
        victims.add(victim);
      }
      long perSender = rate * seconds / SENDERS + 2;
      int sessionsPerSender = (int) Math.max(1,
          (rate * ANSWER_BOUND_S + IN_FLIGHT_PER_SESSION * SENDERS - 1) / (IN_FLIGHT_PER_SESSION * SENDERS));
      List<List<SignedPair>> pairs = new ArrayList<>();
      List<List<ShineClient>> sessions = new ArrayList<>();
      byte[] body = "flood".repeat(40).getBytes(StandardCharsets.UTF_8);
      for (int i = 0; i < SENDERS; i++) {
        String login = "b" + tag + "-f" + i;
        KeyFile key = KeyFile.generate(login);
        admin.publishCard(login, key, List.of(Map.entry(serverLogin, serverUrl)), 1).await();
        List<ShineClient> own = new ArrayList<>();
        for (int s = 0; s < sessionsPerSender; s++) {
          ShineClient session = ShineClient.connect(vertx, serverUrl).await();
          session.login(login, key).await();
          own.add(session);
        }
        sessions.add(own);
        List<SignedPair> signed = new ArrayList<>();
        long now = System.currentTimeMillis();
        for (long n = 0; n < perSender; n++) {
          signed.add(ShineClient.signPair(login, key, victims.get((int) (n % victims.size())), now,
              ShineClient.randomNonce(), 0, body));
        }
        pairs.add(signed);
      }
      return new FloodLoad(vertx, peer, deadRoutes, rate, pairs, sessions);
    } finally {
      admin.close();
    }
  }

  /** What floods what, for the run's description. */
  String describe() {
    if (peer == null) {
      return String.format(Locale.ROOT, "flood: %d pairs/s from %d senders (%d sessions) to %d logins, each routed"
              + " only to a server that is down: %s", rate, SENDERS, SENDERS * sessions.get(0).size(),
          deadRoutes.size(), deadRoutes.stream().map(Map.Entry::getKey).toList());
    }
    return String.format(Locale.ROOT, "flood: %d pairs/s from %d senders (%d sessions) to a login routed only to %s"
            + " at %s", rate, SENDERS, SENDERS * sessions.get(0).size(),
        peer.answers() ? "a peer that answers at once (control)" : "a tarpit that never answers", peer.url());
  }

  /** Sends {@code rate} pairs/s from {@code startNanos} until {@code endNanos}; {@link #finished()} then follows. */
  void start(long startNanos, long endNanos) {
    long total = Math.min(pairs.stream().mapToLong(List::size).sum(),
        rate * (endNanos - startNanos) / 1_000_000_000L);
    double intervalNanos = 1e9 / rate;
    AtomicLong issued = new AtomicLong();
    vertx.setPeriodic(1, id -> {
      long due = Math.min(total, (long) ((System.nanoTime() - startNanos) / intervalNanos) + 1);
      while (issued.get() < due) {
        long n = issued.getAndIncrement();
        int sender = (int) (n % SENDERS);
        long round = n / SENDERS;
        List<ShineClient> own = sessions.get(sender);
        outstanding.incrementAndGet();
        sent.increment();
        own.get((int) (round % own.size())).sendPair(pairs.get(sender).get((int) round), ANSWER_BOUND_S * 2_000)
            .onComplete(ar -> {
              answers.computeIfAbsent(outcome(ar.succeeded() ? ar.result() : null, ar.cause()),
                  k -> new LongAdder()).increment();
              if (outstanding.decrementAndGet() == 0 && issued.get() >= total) {
                finished.tryComplete();
              }
            });
      }
      if (issued.get() >= total) {
        vertx.cancelTimer(id);
        if (outstanding.get() == 0) {
          finished.tryComplete();
        }
      }
    });
  }

  /** Completes when every pair of the flood was sent and answered. */
  Future<Void> finished() {
    return finished.future();
  }

  private static String outcome(JsonNode answer, Throwable failure) {
    if (answer != null) {
      return answer.path("deliveryState").asText("unknown");
    }
    return failure instanceof ShineClientException e ? e.code() : "failed";
  }

  /** One line: what was sent, how it was answered, what the peer got. */
  String report() {
    if (peer == null) {
      return String.format(Locale.ROOT, "flood: %d pairs sent to %d dead servers, answers %s", sent.sum(),
          deadRoutes.size(), answerCounts());
    }
    return String.format(Locale.ROOT, "flood: %d pairs sent, answers %s; the %s got %d ReceiveIncomingMessage calls"
            + " on %d connections, at most %d within %d ms", sent.sum(), answerCounts(),
        peer.answers() ? "control peer" : "tarpit", peer.calls(), peer.connections(), peer.busiestSpan(),
        CALL_TIMEOUT_MS);
  }

  /** The flood's keys of the RESULT line. */
  void addResult(StringJoiner result) {
    result.add("flood_peer=" + (peer == null ? "dead" : peer.answers() ? "answering" : "tarpit"));
    result.add("flood_rate=" + rate);
    result.add("flood_sent=" + sent.sum());
    answerCounts().forEach((outcome, n) -> result.add("flood_" + SendReport.key(outcome) + "=" + n));
    if (peer != null) {
      result.add("flood_peer_calls=" + peer.calls());
      result.add("flood_peer_busiest_5s=" + peer.busiestSpan());
    }
  }

  private Map<String, Long> answerCounts() {
    Map<String, Long> counts = new TreeMap<>();
    answers.forEach((outcome, n) -> counts.put(outcome, n.sum()));
    return counts;
  }

  @Override
  public void close() {
    sessions.forEach(own -> own.forEach(ShineClient::close));
    if (peer != null) {
      peer.close();
    }
  }
}
