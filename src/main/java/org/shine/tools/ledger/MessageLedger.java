package org.shine.tools.ledger;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The books of a load run against real servers, the one ledger of the fault suite ({@code chaos load}) and the soak:
 * every message sent and how it was answered, every push a recipient session got, and the last look at each
 * server's history of it. An accepted message is <em>delivered</em> when it is in the recipient's history on every
 * server that should hold it (for the soak also at the revision last accepted and with the read and deleted flags
 * its receipts and tombstones set); <em>lost</em> when one lacks it; a <em>duplicate</em> is one key twice in one
 * history, or one key and revision pushed twice to one session. Two readings of the same books: {@link #totals}
 * ({@link LedgerTotals}: the fault suite's {@code LEDGER} line, with the answers and the sender copies' final
 * states) and {@link #result} ({@link LedgerResult}: the soak's report, with wrong entries and where copies are
 * missing). Thread-safe: answers,
 * pushes and history pages arrive on several event loops. It holds an entry per message and per push, so its size is
 * bounded by the run's rate and length (a one-hour soak at its default rate: about 36,000 messages).
 */
public final class MessageLedger {
  /** How a message's sends ended, seen from the client. */
  public enum Outcome { PENDING, ACCEPTED, REJECTED }

  private final Map<String, Message> messages = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> answers = new ConcurrentHashMap<>();
  private final Map<String, Boolean> pushes = new ConcurrentHashMap<>();
  private final LongAdder duplicatePushes = new LongAdder();
  private final LongAdder unknownPushes = new LongAdder();

  /** What one look at one history showed of a message: times listed, its delivery state, what was wrong. */
  record Look(int times, String state, List<String> problems) {
  }

  /** What the run expects of one logical message, and what the servers showed of it. */
  public static final class Message {
    public final String baseKey;
    /** The sender's and recipient's logins (null when the caller did not name them). */
    public final String sender;
    public final String recipient;
    public final AtomicLong acceptedRevision = new AtomicLong(-1);
    volatile Outcome outcome = Outcome.PENDING;
    volatile String rejection;
    public volatile boolean readExpected;
    public volatile boolean deletedBySender;
    public volatile boolean deletedByRecipient;
    /** A later change (edit, receipt, tombstone) got no final answer: it may or may not be stored. */
    public volatile boolean uncertain;
    /** {@code server/sender} or {@code server/recipient} → the last look at that history that listed it. */
    final Map<String, Look> looks = new ConcurrentHashMap<>();

    Message(String baseKey, String sender, String recipient) {
      this.baseKey = baseKey;
      this.sender = sender;
      this.recipient = recipient;
    }

    public boolean accepted() {
      return outcome == Outcome.ACCEPTED;
    }

    /** Times the look at {@code side} listed the message (0: not listed, or not looked at). */
    int times(String side) {
      Look look = looks.get(side);
      return look == null ? 0 : look.times();
    }

    /** The delivery state of the sender's copy on {@code server}, or {@code absent}. */
    String state(String server) {
      Look look = looks.get(sideOf(server, true));
      return look == null || look.state() == null ? "absent" : look.state();
    }
  }

  /** A message handed to a server for the first time (a resend of the same bytes changes nothing). */
  public void sent(String baseKey) {
    sent(baseKey, null, null);
  }

  /** A message (revision 0) from {@code sender} to {@code recipient} handed to a server for the first time. */
  public void sent(String baseKey, String sender, String recipient) {
    messages.putIfAbsent(baseKey, new Message(baseKey, sender, recipient));
  }

  /** A 200 for revision 0: the message is stored (whatever else answered before or after). */
  public void accepted(String baseKey) {
    accepted(baseKey, 0);
  }

  /** A 200 for {@code revision} of the message. */
  public void accepted(String baseKey, long revision) {
    Message message = messages.get(baseKey);
    message.acceptedRevision.accumulateAndGet(revision, Math::max);
    message.outcome = Outcome.ACCEPTED;
    count("200");
  }

  /** A final refusal (a 4xx other than 401 and 429): stored nothing, is not resent. */
  public void rejected(String baseKey, int status, String code) {
    Message message = messages.get(baseKey);
    if (message.outcome == Outcome.PENDING) {
      message.outcome = Outcome.REJECTED;
      message.rejection = status + " " + code;
    }
    count(status + " " + code);
  }

  /** An answer that says nothing about storage (closed connection, timeout, 429, 500, 503): the message is resent. */
  public void retried(String code) {
    count(code);
  }

  private void count(String answer) {
    answers.computeIfAbsent(answer, k -> new LongAdder()).increment();
  }

  /** A change of the message was given up without a 200: whatever of it the servers hold is right. */
  public void uncertain(String baseKey) {
    messages.get(baseKey).uncertain = true;
  }

  /** A 200 for the recipient's read receipt. */
  public void read(String baseKey) {
    messages.get(baseKey).readExpected = true;
  }

  /** A 200 for a tombstone of the sender's copy ({@code bySender}) or of the recipient's. */
  public void deleted(String baseKey, boolean bySender) {
    Message message = messages.get(baseKey);
    if (bySender) {
      message.deletedBySender = true;
    } else {
      message.deletedByRecipient = true;
    }
  }

  /**
   * An {@code IncomingDirectMessage} of {@code revision} seen by the session {@code sessionId}; one of a message
   * this ledger never sent is counted apart, not as a duplicate.
   */
  public void pushed(String sessionId, String baseKey, long revision) {
    if (!messages.containsKey(baseKey)) {
      unknownPushes.increment();
    } else if (pushes.putIfAbsent(sessionId + "|" + baseKey + "|" + revision, Boolean.TRUE) != null) {
      duplicatePushes.increment();
    }
  }

  /** The base key of a message key ({@code baseKey|copy}). */
  public static String baseKeyOf(String messageKey) {
    int last = messageKey.lastIndexOf('|');
    return last < 0 ? messageKey : messageKey.substring(0, last);
  }

  public Message message(String baseKey) {
    return messages.get(baseKey);
  }

  public Collection<Message> messages() {
    return messages.values();
  }

  /**
   * One look at one owner's history on {@code server} ({@code GetDirectMessages} items), {@code senderSide} when
   * the owner is the messages' sender (outgoing copies, delivery states): each message listed gets this look in
   * place of the last one; one not listed keeps what an earlier look saw of it (a server down now is looked at
   * again in the next round) unless {@link #clearObservations} forgot it.
   */
  public void observe(String server, boolean senderSide, List<JsonNode> entries) {
    String side = sideOf(server, senderSide);
    Map<String, List<JsonNode>> byKey = new HashMap<>();
    for (JsonNode entry : entries) {
      byKey.computeIfAbsent(entry.path("baseKey").asText(), k -> new ArrayList<>()).add(entry);
    }
    byKey.forEach((baseKey, listed) -> {
      Message message = messages.get(baseKey);
      if (message != null) {
        message.looks.put(side, look(message, side, senderSide, listed));
      }
    });
  }

  private static Look look(Message message, String side, boolean senderSide, List<JsonNode> listed) {
    List<String> problems = new ArrayList<>();
    String state = null;
    for (JsonNode entry : listed) {
      if (senderSide && entry.hasNonNull("deliveryState")) {
        state = entry.path("deliveryState").asText();
      }
      if (!message.accepted() || message.uncertain) {
        continue;
      }
      if (entry.path("revision").asLong() != message.acceptedRevision.get()) {
        problems.add(side + " stale revision");
      }
      if (message.readExpected && !entry.path("read").asBoolean()) {
        problems.add(side + " receipt missing");
      }
      boolean deletedExpected = senderSide ? message.deletedBySender : message.deletedByRecipient;
      if (deletedExpected != entry.path("deleted").asBoolean()) {
        problems.add(side + (deletedExpected ? " tombstone missing" : " deleted unexpectedly"));
      }
    }
    return new Look(listed.size(), senderSide && state == null ? "none" : state, List.copyOf(problems));
  }

  /** Forgets what every earlier look saw, before a round that reads every history again. */
  public void clearObservations() {
    messages.values().forEach(message -> message.looks.clear());
  }

  static String sideOf(String server, boolean senderSide) {
    return server + (senderSide ? "/sender" : "/recipient");
  }

  /** Messages still without an answer that settles them (neither 200 nor a final refusal). */
  public long pending() {
    return messages.values().stream().filter(m -> m.outcome == Outcome.PENDING).count();
  }

  long duplicatePushes() {
    return duplicatePushes.sum();
  }

  long unknownPushes() {
    return unknownPushes.sum();
  }

  Map<String, Long> answers() {
    Map<String, Long> counts = new TreeMap<>();
    answers.forEach((answer, n) -> counts.put(answer, n.sum()));
    return counts;
  }

  /**
   * True when every accepted message is in a final state on every sender server and, unless all of them failed it,
   * on every recipient server.
   */
  public boolean settled(List<String> recipientServers, List<String> senderServers) {
    return LedgerTotals.of(this, recipientServers, senderServers).settled();
  }

  /** The fault suite's reading: the totals of its {@code LEDGER} line. */
  public LedgerTotals totals(List<String> recipientServers, List<String> senderServers) {
    return LedgerTotals.of(this, recipientServers, senderServers);
  }

  /** The soak's reading: counts over the histories looked at on {@code recipientServers} and {@code senderServers}. */
  public LedgerResult result(List<String> recipientServers, List<String> senderServers) {
    return LedgerResult.of(this, recipientServers, senderServers);
  }
}
