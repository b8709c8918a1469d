package org.shine.tools.ledger;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.shine.tools.ledger.MessageLedger.Look;
import org.shine.tools.ledger.MessageLedger.Message;

/**
 * The soak's reading of a {@link MessageLedger}: sent, accepted, delivered (on every server that should hold it),
 * lost (named with the histories that lack it), duplicates in histories and pushes, wrong entries (stale revision,
 * missing receipt or tombstone) and the sender copies' final states; {@link #ok()} when nothing is lost, repeated or
 * wrong.
 */
public record LedgerResult(long sent, long accepted, long delivered, long lost, long uncertain,
    long duplicatesInHistory, long duplicatePushes, Map<String, Long> lostBy, Map<String, Long> problems,
    Map<String, Long> finalStates) {

  static LedgerResult of(MessageLedger ledger, List<String> recipientServers, List<String> senderServers) {
    long accepted = 0;
    long delivered = 0;
    long lost = 0;
    long uncertain = 0;
    long duplicatesInHistory = 0;
    Map<String, Long> lostBy = new TreeMap<>();
    Map<String, Long> problems = new TreeMap<>();
    Map<String, Long> states = new TreeMap<>();
    for (Message message : ledger.messages()) {
      duplicatesInHistory += message.looks.values().stream().filter(look -> look.times() > 1).count();
      if (!message.accepted()) {
        continue;
      }
      accepted++;
      uncertain += message.uncertain ? 1 : 0;
      boolean everywhere = listedEverywhere(message, recipientServers, false, lostBy)
          & listedEverywhere(message, senderServers, true, lostBy);
      if (everywhere) {
        delivered++;
      } else {
        lost++;
      }
      message.looks.forEach((side, look) -> tally(side, look, problems, states));
    }
    return new LedgerResult(ledger.messages().size(), accepted, delivered, lost, uncertain, duplicatesInHistory,
        ledger.duplicatePushes(), lostBy, problems, states);
  }

  /** True when every history of {@code servers} on that side listed the message; counts those that did not. */
  private static boolean listedEverywhere(Message message, List<String> servers, boolean senderSide,
      Map<String, Long> lostBy) {
    boolean everywhere = true;
    for (String server : servers) {
      String side = MessageLedger.sideOf(server, senderSide);
      if (message.times(side) < 1) {
        everywhere = false;
        lostBy.merge(side, 1L, Long::sum);
      }
    }
    return everywhere;
  }

  /** A look's wrong entries, and for a sender's history the final state of each entry ({@code server state}). */
  private static void tally(String side, Look look, Map<String, Long> problems, Map<String, Long> states) {
    look.problems().forEach(problem -> problems.merge(problem, 1L, Long::sum));
    if (side.endsWith("/sender")) {
      String server = side.substring(0, side.length() - "/sender".length());
      states.merge(server + " " + look.state(), (long) look.times(), Long::sum);
    }
  }

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

  /** Final states of the sender's copies that are not in {@code settled} (on any server). */
  public long unsettled(Set<String> settled) {
    return finalStates.entrySet().stream()
        .filter(e -> settled.stream().noneMatch(s -> e.getKey().endsWith(" " + s)))
        .mapToLong(Map.Entry::getValue).sum();
  }
}
