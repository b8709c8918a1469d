package org.shine.tools.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.shine.server.client.Resender;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.client.ShineClientException;
import org.shine.server.dm.KeyFile;

/**
 * One load of {@code bench send}: a warm-up followed by the measured window, without a pause between them. Every
 * pair sent is a flight keyed by its baseKey; the sender's answer and the recipient session's
 * {@code IncomingDirectMessage} both land on it, so the send→recipient latency, lost pairs and duplicate pushes
 * come from the same record. In a closed loop each sender keeps {@code window} flights open, and a flight gives its
 * slot back on the recipient's arrival (or on the answer), on an error answer, or after the slot timeout. One
 * class (a little over 400 lines) on purpose: the loops, the answers, the arrivals and the counts all work on the
 * same flights and counters, and the options and report of the run are already apart ({@link SendSettings},
 * {@link SendReport}).
 */
final class SendRun {
  private static final long HIGHEST_MICROS = TimeUnit.MINUTES.toMicros(10);
  private static final String CONNECTION_CLOSED = ShineClient.CONNECTION_CLOSED;
  private static final int ACCEPTED = 1;
  private static final int ARRIVED = 2;
  /** Seconds after the window that the per-second timeline still covers (the drain and the grace). */
  private static final int TIMELINE_AFTER_S = 120;

  private final Vertx vertx;
  private final long startNanos;
  private final long windowStart;
  private final long windowEnd;
  private final long slotTimeoutNanos;
  private final boolean freeOnArrival;
  private final Map<String, Flight> flights = new ConcurrentHashMap<>();
  private final Set<Flight> openSlots = ConcurrentHashMap.newKeySet();
  private final ConcurrentHistogram arrivalMicros = new ConcurrentHistogram(HIGHEST_MICROS, 3);
  private final ConcurrentHistogram acceptMicros = new ConcurrentHistogram(HIGHEST_MICROS, 3);
  private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> states = new ConcurrentHashMap<>();
  final LongAdder acceptedInWindow = new LongAdder();
  final LongAdder deliveredInWindow = new LongAdder();
  final LongAdder measuredSent = new LongAdder();
  final LongAdder measuredAccepted = new LongAdder();
  final LongAdder measuredAcceptedArrived = new LongAdder();
  final LongAdder measuredArrived = new LongAdder();
  final LongAdder duplicates = new LongAdder();
  final LongAdder unexpectedPushes = new LongAdder();
  final LongAdder slotTimeouts = new LongAdder();
  final LongAdder warmupSent = new LongAdder();
  final LongAdder warmupErrors = new LongAdder();
  private final Timeline accepts;
  private final Timeline arrivals;
  private final Timeline failures;
  private final AtomicLong outstanding = new AtomicLong();
  private final AtomicLong printedErrors = new AtomicLong();

  /**
   * A run that starts at {@code startNanos}, measures from {@code warmupS} after it for {@code seconds}; a closed
   * loop frees slots on arrival when {@code freeOnArrival}, and after {@code slotTimeoutMs} in any case.
   */
  SendRun(Vertx vertx, long startNanos, int warmupS, int seconds, boolean freeOnArrival, long slotTimeoutMs) {
    this.vertx = vertx;
    this.startNanos = startNanos;
    this.windowStart = startNanos + TimeUnit.SECONDS.toNanos(warmupS);
    this.windowEnd = windowStart + TimeUnit.SECONDS.toNanos(seconds);
    this.freeOnArrival = freeOnArrival;
    this.slotTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(slotTimeoutMs);
    int timelineSeconds = warmupS + seconds + TIMELINE_AFTER_S;
    this.accepts = new Timeline(startNanos, timelineSeconds);
    this.arrivals = new Timeline(startNanos, timelineSeconds);
    this.failures = new Timeline(startNanos, timelineSeconds);
  }

  long windowStart() {
    return windowStart;
  }

  long windowEnd() {
    return windowEnd;
  }

  /** Handles one server push to a recipient session. */
  void onRecipientEvent(JsonNode frame) {
    if (!"IncomingDirectMessage".equals(frame.path("op").asText())) {
      return;
    }
    long now = System.nanoTime();
    Flight flight = flights.get(frame.path("payload").path("baseKey").asText());
    if (flight == null) {
      unexpectedPushes.increment();
      return;
    }
    if (flight.pushes.incrementAndGet() > 1) {
      if (flight.measured) {
        duplicates.increment();
      }
      return;
    }
    arrivals.count(now);
    if (inWindow(now)) {
      deliveredInWindow.increment();
    }
    if (flight.measured) {
      measuredArrived.increment();
      arrivalMicros.recordValue(micros(now - flight.sentNanos));
      mark(flight, ARRIVED);
    }
    if (freeOnArrival) {
      freeSlot(flight, false);
    }
  }

  /** Starts the closed loop: {@code window} flights per sender until the window ends; completes when all stopped. */
  Future<Void> closedLoop(List<Sender> senders, int window) {
    AtomicInteger slots = new AtomicInteger(senders.size() * window);
    Promise<Void> stopped = Promise.promise();
    long sweeper = vertx.setPeriodic(100, id -> sweepSlots());
    for (Sender sender : senders) {
      sender.context = vertx.getOrCreateContext();
      sender.slotStopped = () -> {
        if (slots.decrementAndGet() == 0) {
          vertx.cancelTimer(sweeper);
          stopped.tryComplete();
        }
      };
      for (int w = 0; w < window; w++) {
        sender.context.runOnContext(v -> sendNext(sender));
      }
    }
    return stopped.future();
  }

  /** Starts the open loop: {@code rate} pairs/s round-robin over the senders; completes when all are answered. */
  Future<Void> openLoop(List<Sender> senders, long rate) {
    long total = rate * TimeUnit.NANOSECONDS.toSeconds(windowEnd - startNanos);
    double intervalNanos = 1e9 / rate;
    AtomicLong issued = new AtomicLong();
    AtomicBoolean allIssued = new AtomicBoolean();
    Promise<Void> answered = Promise.promise();
    vertx.setPeriodic(1, id -> {
      long due = Math.min(total, (long) ((System.nanoTime() - startNanos) / intervalNanos) + 1);
      while (issued.get() < due) {
        long n = issued.getAndIncrement();
        // latencies count from the intended send time, so a stalled server cannot hide its queueing
        long intended = startNanos + (long) (n * intervalNanos);
        Sender sender = senders.get((int) (n % senders.size()));
        Flight flight = launch(sender, sender.next(), intended);
        outstanding.incrementAndGet();
        sender.resender.sendPair(flight.pair).onComplete(ar -> {
          onAnswer(flight, ar);
          if (outstanding.decrementAndGet() == 0 && allIssued.get()) {
            answered.tryComplete();
          }
        });
      }
      if (issued.get() >= total) {
        vertx.cancelTimer(id);
        allIssued.set(true);
        if (outstanding.get() == 0) {
          answered.tryComplete();
        }
      }
    });
    return answered.future();
  }

  private void sendNext(Sender sender) {
    long now = System.nanoTime();
    if (now >= windowEnd || sender.closed) {
      sender.slotStopped.run();
      return;
    }
    Flight flight = launch(sender, sender.next(), now);
    openSlots.add(flight);
    outstanding.incrementAndGet();
    sender.resender.sendPair(flight.pair).onComplete(ar -> {
      onAnswer(flight, ar);
      outstanding.decrementAndGet();
      if (ar.failed() || !freeOnArrival) {
        freeSlot(flight, false);
      }
    });
  }

  private Flight launch(Sender sender, SignedPair pair, long sentNanos) {
    boolean measured = inWindow(sentNanos);
    Flight flight = new Flight(sender, pair, sentNanos, measured);
    flights.put(pair.incoming().baseKey(), flight);
    (measured ? measuredSent : warmupSent).increment();
    return flight;
  }

  private void onAnswer(Flight flight, AsyncResult<JsonNode> answer) {
    long now = System.nanoTime();
    if (answer.succeeded()) {
      accepts.count(now);
      if (inWindow(now)) {
        acceptedInWindow.increment();
      }
      if (flight.measured) {
        measuredAccepted.increment();
        acceptMicros.recordValue(micros(now - flight.sentNanos));
        states.computeIfAbsent(answer.result().path("deliveryState").asText(), k -> new LongAdder()).increment();
        mark(flight, ACCEPTED);
      }
      return;
    }
    failures.count(now);
    String code = answer.cause() instanceof ShineClientException e ? e.code()
        : answer.cause().getClass().getSimpleName();
    if (CONNECTION_CLOSED.equals(code)) {
      flight.sender.closed = true;
    }
    if (!flight.measured) {
      warmupErrors.increment();
      return;
    }
    errors.computeIfAbsent(code, k -> new LongAdder()).increment();
    if (printedErrors.incrementAndGet() <= 5) {
      System.out.println("error: " + answer.cause().getMessage());
    }
  }

  /** A flight that is both accepted and arrived counts once, whichever came first. */
  private void mark(Flight flight, int bit) {
    int before = flight.marks.getAndAccumulate(bit, (a, b) -> a | b);
    if (before != (ACCEPTED | ARRIVED) && (before | bit) == (ACCEPTED | ARRIVED)) {
      measuredAcceptedArrived.increment();
    }
  }

  private void freeSlot(Flight flight, boolean timedOut) {
    if (!openSlots.remove(flight)) {
      return;
    }
    if (timedOut && flight.measured) {
      slotTimeouts.increment();
    }
    // on the sender's own context: an answer, an arrival and a timeout may come on three threads
    flight.sender.context.runOnContext(v -> sendNext(flight.sender));
  }

  private void sweepSlots() {
    long now = System.nanoTime();
    for (Flight flight : openSlots) {
      if (now - flight.sentNanos > slotTimeoutNanos) {
        freeSlot(flight, true);
      }
    }
  }

  private boolean inWindow(long nanos) {
    return nanos >= windowStart && nanos < windowEnd;
  }

  private static long micros(long nanos) {
    return Math.max(1, Math.min(HIGHEST_MICROS, TimeUnit.NANOSECONDS.toMicros(nanos)));
  }

  /** Sends not answered yet (in a closed loop freed on arrival, a slot may move on before its answer comes). */
  long unanswered() {
    return outstanding.get();
  }

  /** Measured pairs answered 200 that have not arrived (yet). */
  long missing() {
    return measuredAccepted.sum() - measuredAcceptedArrived.sum();
  }

  Histogram arrivalMicros() {
    return arrivalMicros.copy();
  }

  Histogram acceptMicros() {
    return acceptMicros.copy();
  }

  /** Error answers of measured pairs by error code. */
  Map<String, Long> errors() {
    Map<String, Long> sorted = new TreeMap<>();
    errors.forEach((code, n) -> sorted.put(code, n.sum()));
    return sorted;
  }

  long errorCount() {
    return errors.values().stream().mapToLong(LongAdder::sum).sum();
  }

  /** Delivery states in the 200 answers of measured pairs. */
  Map<String, Long> states() {
    Map<String, Long> sorted = new TreeMap<>();
    states.forEach((state, n) -> sorted.put(state, n.sum()));
    return sorted;
  }

  /**
   * Per second since the start, until the last second anything happened: 200 answers / first pushes at the
   * recipients / error answers, as {@code second:accepted/delivered/errors} — where a stall or a burst shows.
   */
  String timeline() {
    int last = Math.max(accepts.last(), Math.max(arrivals.last(), failures.last()));
    StringBuilder text = new StringBuilder();
    for (int second = 0; second <= last; second++) {
      text.append(second == 0 ? "" : " ").append(second + 1).append(':').append(accepts.at(second)).append('/')
          .append(arrivals.at(second)).append('/').append(failures.at(second));
    }
    return text.toString();
  }

  /** Counts per second since a start. */
  private static final class Timeline {
    private final long startNanos;
    private final LongAdder[] seconds;

    Timeline(long startNanos, int length) {
      this.startNanos = startNanos;
      this.seconds = new LongAdder[length];
      for (int i = 0; i < length; i++) {
        seconds[i] = new LongAdder();
      }
    }

    void count(long nanos) {
      long second = TimeUnit.NANOSECONDS.toSeconds(nanos - startNanos);
      seconds[(int) Math.max(0, Math.min(seconds.length - 1, second))].increment();
    }

    long at(int second) {
      return seconds[second].sum();
    }

    int last() {
      for (int i = seconds.length - 1; i >= 0; i--) {
        if (seconds[i].sum() > 0) {
          return i;
        }
      }
      return -1;
    }
  }

  /** One pair sent: its answer and its arrival at the recipient session both land here. */
  private static final class Flight {
    final Sender sender;
    final SignedPair pair;
    final long sentNanos;
    final boolean measured;
    final AtomicInteger pushes = new AtomicInteger();
    final AtomicInteger marks = new AtomicInteger();

    Flight(Sender sender, SignedPair pair, long sentNanos, boolean measured) {
      this.sender = sender;
      this.pair = pair;
      this.sentNanos = sentNanos;
      this.measured = measured;
    }
  }

  /**
   * One connection logged in as one sender, with its pre-signed pairs (more are signed when they run out); a pair
   * that gets 503, 500, 429, no answer or a lost connection is sent again with the same bytes (reconnecting when
   * needed), so the ledger counts each message once, whatever the server went through.
   */
  static final class Sender {
    final ShineClient client;
    final Resender resender;
    final String from;
    final KeyFile key;
    final String to;
    final List<SignedPair> pairs = new java.util.ArrayList<>();
    private final AtomicInteger next = new AtomicInteger();
    private final LongAdder signedLate = new LongAdder();
    private byte[] body = new byte[0];
    volatile boolean closed;
    Context context;
    Runnable slotStopped;

    Sender(ShineClient client, Supplier<Future<ShineClient>> reconnect, String from, KeyFile key, String to) {
      this.client = client;
      this.resender = new Resender(client.vertx(), client, reconnect, Resender.Policy.DEFAULT);
      this.from = from;
      this.key = key;
      this.to = to;
    }

    void sign(long count, byte[] body) {
      this.body = body.clone();
      long now = System.currentTimeMillis();
      for (long i = 0; i < count; i++) {
        pairs.add(ShineClient.signPair(from, key, to, now, ShineClient.randomNonce(), 0, body));
      }
    }

    SignedPair next() {
      int i = next.getAndIncrement();
      if (i < pairs.size()) {
        return pairs.get(i);
      }
      signedLate.increment();
      return ShineClient.signPair(from, key, to, System.currentTimeMillis(), ShineClient.randomNonce(), 0, body);
    }

    /** Pairs signed during the run because the pre-signed ones ran out (the bench's CPU then includes them). */
    long signedLate() {
      return signedLate.sum();
    }
  }
}
