package org.shine.tools.ledger;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The books of one fault scenario: every pair sent and how it was answered, every push a recipient session got,
 * and the last look at each server's history. A pair answered 200 is <em>lost</em> when its recipient copy is not in
 * the recipient's history on every recipient server; it is <em>duplicated</em> when a history holds its key twice or
 * one session got its {@code IncomingDirectMessage} twice (all pairs here are revision 0, so the key names the
 * revision too). Thread-safe: answers, pushes and history pages arrive on several event loops.
 */
public final class ChaosLedger {
  /** How a pair's sends ended, seen from the client. */
  public enum Outcome { PENDING, ACCEPTED, REJECTED }

  private static final Set<String> TERMINAL = Set.of("delivered", "failed");

  private final List<String> recipientServers;
  private final List<String> senderServers;
  private final Map<String, Pair> pairs = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> answers = new ConcurrentHashMap<>();
  /** session id → message keys pushed to it. */
  private final Map<Long, Set<String>> pushed = new ConcurrentHashMap<>();
  private final LongAdder duplicatePushes = new LongAdder();
  private final LongAdder unknownPushes = new LongAdder();

  /** A ledger checking copies on {@code recipientServers} and sender states on {@code senderServers} (logins). */
  public ChaosLedger(List<String> recipientServers, List<String> senderServers) {
    this.recipientServers = List.copyOf(recipientServers);
    this.senderServers = List.copyOf(senderServers);
  }

  /** One logical message: its answers and what each server shows of it. */
  private static final class Pair {
    final String baseKey;
    final String incomingKey;
    volatile Outcome outcome = Outcome.PENDING;
    volatile String rejection;
    /** recipient server → times its history holds the copy. */
    final Map<String, Integer> copies = new ConcurrentHashMap<>();
    /** sender server → delivery state of the sender's copy there. */
    final Map<String, String> states = new ConcurrentHashMap<>();
    final AtomicInteger answers = new AtomicInteger();

    Pair(String baseKey) {
      this.baseKey = baseKey;
      this.incomingKey = baseKey + "|1";
    }
  }

  public void sent(String baseKey) {
    pairs.putIfAbsent(baseKey, new Pair(baseKey));
  }

  /** A 200 answer: the pair is stored (whatever else answered before or after). */
  public void accepted(String baseKey) {
    Pair pair = pairs.get(baseKey);
    pair.answers.incrementAndGet();
    pair.outcome = Outcome.ACCEPTED;
    count("200");
  }

  /** A final refusal (a 4xx other than 401 and 429): stored nothing, is not resent. */
  public void rejected(String baseKey, int status, String code) {
    Pair pair = pairs.get(baseKey);
    if (pair.outcome == Outcome.PENDING) {
      pair.outcome = Outcome.REJECTED;
      pair.rejection = status + " " + code;
    }
    count(status + " " + code);
  }

  /** An answer that says nothing about storage (closed connection, timeout, 429, 500, 503): the pair is resent. */
  public void retried(String code) {
    count(code);
  }

  private void count(String answer) {
    answers.computeIfAbsent(answer, k -> new LongAdder()).increment();
  }

  /** An {@code IncomingDirectMessage} of {@code messageKey} on the recipient session {@code sessionId}. */
  public void pushed(long sessionId, String messageKey) {
    if (!pairs.containsKey(baseKeyOf(messageKey))) {
      unknownPushes.increment();
      return;
    }
    if (!pushed.computeIfAbsent(sessionId, k -> ConcurrentHashMap.newKeySet()).add(messageKey)) {
      duplicatePushes.increment();
    }
  }

  /** The recipient's whole history with one sender on {@code server}: message key → times it is listed. */
  public void recipientHistory(String server, Map<String, Integer> incomingKeys) {
    incomingKeys.forEach((key, times) -> {
      Pair pair = pairs.get(baseKeyOf(key));
      if (pair != null && key.equals(pair.incomingKey)) {
        pair.copies.put(server, times);
      }
    });
  }

  /** The sender's history on {@code server}: baseKey → delivery state of the outgoing copy. */
  public void senderStates(String server, Map<String, String> states) {
    states.forEach((baseKey, state) -> {
      Pair pair = pairs.get(baseKey);
      if (pair != null) {
        pair.states.put(server, state);
      }
    });
  }

  private static String baseKeyOf(String messageKey) {
    int last = messageKey.lastIndexOf('|');
    return last < 0 ? messageKey : messageKey.substring(0, last);
  }

  /** Pairs still without an answer that settles them (neither 200 nor a final refusal). */
  public long pending() {
    return pairs.values().stream().filter(p -> p.outcome == Outcome.PENDING).count();
  }

  /**
   * True when every accepted pair is in a final state on every sender server and, unless all of them failed it,
   * on every recipient server.
   */
  public boolean settled() {
    for (Pair pair : pairs.values()) {
      if (pair.outcome != Outcome.ACCEPTED) {
        continue;
      }
      boolean failedEverywhere = senderServers.stream().allMatch(s -> "failed".equals(pair.states.get(s)));
      for (String server : recipientServers) {
        if (!failedEverywhere && pair.copies.getOrDefault(server, 0) < 1) {
          return false;
        }
      }
      for (String server : senderServers) {
        if (!TERMINAL.contains(pair.states.getOrDefault(server, "absent"))) {
          return false;
        }
      }
    }
    return true;
  }

  /** The totals of the ledger line. */
  public record Totals(long sent, long accepted, long rejected, long unresolved, long delivered, long lost,
      long failedByRules, long duplicated, long duplicatePushes, long duplicateCopies, long unsettled,
      Map<String, Map<String, Long>> states, Map<String, Long> answers, long unknownPushes) {

    /** Nothing lost, duplicated, unanswered or unsettled, and something accepted (else nothing was tested). */
    public boolean clean() {
      return accepted > 0 && lost == 0 && duplicated == 0 && unresolved == 0 && unsettled == 0;
    }
  }

  public Totals totals() {
    long sent = pairs.size();
    long accepted = 0;
    long rejected = 0;
    long delivered = 0;
    long lost = 0;
    long failedByRules = 0;
    long duplicateCopies = 0;
    long unsettled = 0;
    Map<String, Map<String, Long>> states = new LinkedHashMap<>();
    senderServers.forEach(s -> states.put(s, new TreeMap<>()));
    for (Pair pair : pairs.values()) {
      if (pair.outcome == Outcome.REJECTED) {
        rejected++;
      }
      // a copy listed twice is a duplicate whether or not the client saw its 200
      for (int times : pair.copies.values()) {
        duplicateCopies += times > 1 ? times - 1 : 0;
      }
      if (pair.outcome != Outcome.ACCEPTED) {
        continue;
      }
      accepted++;
      boolean everywhere = recipientServers.stream().allMatch(s -> pair.copies.getOrDefault(s, 0) >= 1);
      boolean failedEverywhere = senderServers.stream().allMatch(s -> "failed".equals(pair.states.get(s)));
      if (everywhere) {
        delivered++;
      } else if (failedEverywhere) {
        // the rules gave up on it (seed §5): not delivered, and not lost either
        failedByRules++;
      } else {
        lost++;
      }
      boolean settledHere = true;
      for (String server : senderServers) {
        String state = pair.states.getOrDefault(server, "absent");
        states.get(server).merge(state, 1L, Long::sum);
        settledHere &= TERMINAL.contains(state);
      }
      unsettled += settledHere ? 0 : 1;
    }
    Map<String, Long> answerCounts = new TreeMap<>();
    answers.forEach((answer, n) -> answerCounts.put(answer, n.sum()));
    long duplicatePushCount = duplicatePushes.sum();
    return new Totals(sent, accepted, rejected, pending(), delivered, lost, failedByRules,
        duplicateCopies + duplicatePushCount,
        duplicatePushCount, duplicateCopies, unsettled, states, answerCounts, unknownPushes.sum());
  }

  /** The one ledger line: {@code sent / accepted / delivered / lost / duplicated / final states}, then details. */
  public static String line(String scenario, Totals t) {
    StringJoiner states = new StringJoiner("; ");
    t.states().forEach((server, counts) -> {
      StringJoiner each = new StringJoiner(" ");
      counts.forEach((state, n) -> each.add(state + "=" + n));
      states.add(server + " " + (counts.isEmpty() ? "-" : each.toString()));
    });
    StringJoiner answers = new StringJoiner(" ");
    t.answers().forEach((answer, n) -> answers.add(answer.replace(' ', ':') + "=" + n));
    return String.format(Locale.ROOT, "LEDGER %s: sent %d / accepted %d / delivered %d / lost %d / duplicated %d"
            + " / final states %s | failed on every sender server and not delivered %d, rejected %d, unresolved %d, unsettled %d, duplicate pushes %d, duplicate"
            + " history rows %d, unknown pushes %d, answers: %s | %s",
        scenario, t.sent(), t.accepted(), t.delivered(), t.lost(), t.duplicated(), states, t.failedByRules(),
        t.rejected(),
        t.unresolved(), t.unsettled(), t.duplicatePushes(), t.duplicateCopies(), t.unknownPushes(), answers,
        t.clean() ? "OK" : "FAIL");
  }
}
