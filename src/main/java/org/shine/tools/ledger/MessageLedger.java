package org.shine.tools.ledger;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The account of a load run against real servers: every message sent, what the servers answered, what reached the
 * recipient's sessions, and what each server holds at the end (its history pages). It answers the ledger
 * {@code sent / accepted / delivered / lost / duplicated / final states}: an accepted message is delivered when it is
 * in the recipient's history on every server that should hold it, at the revision last accepted and with the read
 * and deleted flags its receipts and tombstones set; lost when one of those servers lacks it or shows it stale; a
 * duplicate is one key twice in one history, or one key and revision pushed twice to one session. Thread-safe.
 * It holds an entry per message and per push of the run, so its size is bounded by the run's rate and length (a
 * one-hour soak at its default rate: about 36,000 messages).
 */
public final class MessageLedger {
  private final Map<String, Message> messages = new ConcurrentHashMap<>();
  private final Map<String, Boolean> pushes = new ConcurrentHashMap<>();
  private final LongAdder sent = new LongAdder();
  private final LongAdder duplicatePushes = new LongAdder();
  private final Map<String, Map<String, Integer>> seen = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> finalStates = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> problems = new ConcurrentHashMap<>();

  /** What the run expects of one logical message. */
  public static final class Message {
    public final String baseKey;
    public final String sender;
    public final String recipient;
    public final AtomicLong acceptedRevision = new AtomicLong(-1);
    public volatile boolean readExpected;
    public volatile boolean deletedBySender;
    public volatile boolean deletedByRecipient;
    /** A later change (edit, receipt, tombstone) got no final answer: it may or may not be stored. */
    public volatile boolean uncertain;

    public Message(String baseKey, String sender, String recipient) {
      this.baseKey = baseKey;
      this.sender = sender;
      this.recipient = recipient;
    }

    public boolean accepted() {
      return acceptedRevision.get() >= 0;
    }
  }

  /** A message (revision 0) handed to a server for the first time. */
  public void sent(String baseKey, String sender, String recipient) {
    sent.increment();
    messages.putIfAbsent(baseKey, new Message(baseKey, sender, recipient));
  }

  /** A 200 for {@code revision} of the message. */
  public void accepted(String baseKey, long revision) {
    messages.get(baseKey).acceptedRevision.accumulateAndGet(revision, Math::max);
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

  /** An {@code IncomingDirectMessage} of {@code revision} seen by the session {@code sessionId}. */
  public void pushed(String sessionId, String baseKey, long revision) {
    if (pushes.putIfAbsent(sessionId + "|" + baseKey + "|" + revision, Boolean.TRUE) != null) {
      duplicatePushes.increment();
    }
  }

  public Message message(String baseKey) {
    return messages.get(baseKey);
  }

  public Collection<Message> messages() {
    return messages.values();
  }

  public long sentCount() {
    return sent.sum();
  }

  public long acceptedCount() {
    return messages.values().stream().filter(Message::accepted).count();
  }

  /** Pushes of one key and revision to one session beyond the first. */
  public long duplicatePushes() {
    return duplicatePushes.sum();
  }

  /**
   * Checks one owner's history page entries on {@code server} ({@code GetDirectMessages} items) against the
   * expectations; {@code senderSide} when the owner is the messages' sender (outgoing copies, delivery states).
   */
  public void observe(String server, boolean senderSide, List<JsonNode> entries) {
    String side = server + (senderSide ? "/sender" : "/recipient");
    Map<String, Integer> counts = seen.computeIfAbsent(side, k -> new ConcurrentHashMap<>());
    for (JsonNode entry : entries) {
      String baseKey = entry.path("baseKey").asText();
      counts.merge(baseKey, 1, Integer::sum);
      Message message = messages.get(baseKey);
      if (message == null || !message.accepted()) {
        continue;
      }
      if (senderSide) {
        finalStates.computeIfAbsent(server + " " + entry.path("deliveryState").asText("none"),
            k -> new LongAdder()).increment();
      }
      if (message.uncertain) {
        continue;
      }
      if (entry.path("revision").asLong() != message.acceptedRevision.get()) {
        problem(side + " stale revision");
      }
      if (message.readExpected && !entry.path("read").asBoolean()) {
        problem(side + " receipt missing");
      }
      boolean deletedExpected = senderSide ? message.deletedBySender : message.deletedByRecipient;
      if (deletedExpected != entry.path("deleted").asBoolean()) {
        problem(side + (deletedExpected ? " tombstone missing" : " deleted unexpectedly"));
      }
    }
  }

  /** Forgets what the last round of history reads saw, before the next round. */
  public void clearObservations() {
    seen.clear();
    finalStates.clear();
    problems.clear();
  }

  private void problem(String what) {
    problems.computeIfAbsent(what, k -> new LongAdder()).increment();
  }

  /** The end of the run: counts over the histories observed on {@code recipientServers} and {@code senderServers}. */
  public Result result(List<String> recipientServers, List<String> senderServers) {
    long accepted = 0;
    long delivered = 0;
    long lost = 0;
    Map<String, Long> lostBy = new TreeMap<>();
    for (Message message : messages.values()) {
      if (!message.accepted()) {
        continue;
      }
      accepted++;
      boolean everywhere = true;
      for (String server : recipientServers) {
        if (!seen.getOrDefault(server + "/recipient", Map.of()).containsKey(message.baseKey)) {
          everywhere = false;
          lostBy.merge(server + "/recipient", 1L, Long::sum);
        }
      }
      for (String server : senderServers) {
        if (!seen.getOrDefault(server + "/sender", Map.of()).containsKey(message.baseKey)) {
          everywhere = false;
          lostBy.merge(server + "/sender", 1L, Long::sum);
        }
      }
      if (everywhere) {
        delivered++;
      } else {
        lost++;
      }
    }
    long duplicatesInHistory = seen.values().stream().flatMap(m -> m.values().stream()).filter(n -> n > 1).count();
    Map<String, Long> problemCounts = new TreeMap<>();
    problems.forEach((k, v) -> problemCounts.put(k, v.sum()));
    Map<String, Long> states = new TreeMap<>();
    finalStates.forEach((k, v) -> states.put(k, v.sum()));
    long uncertain = messages.values().stream().filter(m -> m.accepted() && m.uncertain).count();
    return new Result(sent.sum(), accepted, delivered, lost, uncertain, duplicatesInHistory, duplicatePushes.sum(), lostBy,
        problemCounts, states);
  }

  /** The ledger's numbers; {@link #ok()} when nothing is lost, repeated or wrong. */
  public record Result(long sent, long accepted, long delivered, long lost, long uncertain, long duplicatesInHistory,
      long duplicatePushes, Map<String, Long> lostBy, Map<String, Long> problems, Map<String, Long> finalStates) {

    public boolean ok() {
      return lost == 0 && duplicatesInHistory == 0 && duplicatePushes == 0 && problems.isEmpty();
    }

    public List<String> lines() {
      List<String> lines = new ArrayList<>();
      lines.add(String.format(Locale.ROOT, "sent %d / accepted %d / delivered %d / lost %d / duplicated %d"
          + " (%d in histories, %d pushes)", sent, accepted, delivered, lost, duplicatesInHistory + duplicatePushes,
          duplicatesInHistory, duplicatePushes));
      if (uncertain > 0) {
        lines.add(uncertain + " accepted messages had a later change given up unanswered (checked for presence only)");
      }
      lines.add("final states: " + (finalStates.isEmpty() ? "none" : finalStates.toString()));
      if (!lostBy.isEmpty()) {
        lines.add("missing from: " + lostBy);
      }
      if (!problems.isEmpty()) {
        lines.add("wrong entries: " + problems);
      }
      return lines;
    }

    /** Final states of the sender's copies that are not {@code delivered} (on any server). */
    public long unsettled(Set<String> settled) {
      return finalStates.entrySet().stream()
          .filter(e -> settled.stream().noneMatch(s -> e.getKey().endsWith(" " + s)))
          .mapToLong(Map.Entry::getValue).sum();
    }
  }
}
