package org.shine.tools.ledger;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.TreeMap;
import org.shine.tools.ledger.MessageLedger.Message;
import org.shine.tools.ledger.MessageLedger.Outcome;

/**
 * The fault suite's reading of a {@link MessageLedger}: {@code sent / accepted / delivered / lost / duplicated /
 * final states} with the details of its {@code LEDGER} line. An accepted message failed on every sender server and
 * missing at a recipient server is failed by the rules (seed §5), not lost; one whose sender copy is not final on
 * every sender server is unsettled; a copy listed twice is a duplicate whether or not the client saw its 200.
 */
public record LedgerTotals(long sent, long accepted, long rejected, long unresolved, long delivered, long lost,
    long failedByRules, long duplicated, long duplicatePushes, long duplicateCopies, long unsettled,
    long notOnRecipients, Map<String, Map<String, Long>> states, Map<String, Long> answers, long unknownPushes) {

  private static final Set<String> TERMINAL = Set.of("delivered", "failed");

  /** Nothing lost, duplicated, unanswered or unsettled, and something accepted (else nothing was tested). */
  public boolean clean() {
    return accepted > 0 && lost == 0 && duplicated == 0 && unresolved == 0 && unsettled == 0;
  }

  /** Every accepted message final on every sender server and, unless all failed it, on every recipient server. */
  boolean settled() {
    return unsettled == 0 && notOnRecipients == 0;
  }

  static LedgerTotals of(MessageLedger ledger, List<String> recipientServers, List<String> senderServers) {
    long accepted = 0;
    long rejected = 0;
    long delivered = 0;
    long lost = 0;
    long failedByRules = 0;
    long duplicateCopies = 0;
    long unsettled = 0;
    long notOnRecipients = 0;
    Map<String, Map<String, Long>> states = new LinkedHashMap<>();
    senderServers.forEach(s -> states.put(s, new TreeMap<>()));
    for (Message message : ledger.messages()) {
      rejected += message.outcome == Outcome.REJECTED ? 1 : 0;
      for (String server : recipientServers) {
        int times = message.times(MessageLedger.sideOf(server, false));
        duplicateCopies += times > 1 ? times - 1 : 0;
      }
      if (!message.accepted()) {
        continue;
      }
      accepted++;
      boolean everywhere = recipientServers.stream()
          .allMatch(s -> message.times(MessageLedger.sideOf(s, false)) >= 1);
      boolean failedEverywhere = senderServers.stream().allMatch(s -> "failed".equals(message.state(s)));
      if (everywhere) {
        delivered++;
      } else if (failedEverywhere) {
        failedByRules++;
      } else {
        lost++;
        notOnRecipients++;
      }
      boolean settledHere = true;
      for (String server : senderServers) {
        String state = message.state(server);
        states.get(server).merge(state, 1L, Long::sum);
        settledHere &= TERMINAL.contains(state);
      }
      unsettled += settledHere ? 0 : 1;
    }
    long duplicatePushes = ledger.duplicatePushes();
    return new LedgerTotals(ledger.messages().size(), accepted, rejected, ledger.pending(), delivered, lost,
        failedByRules, duplicateCopies + duplicatePushes, duplicatePushes, duplicateCopies, unsettled,
        notOnRecipients, states, ledger.answers(), ledger.unknownPushes());
  }

  /** The one ledger line: {@code sent / accepted / delivered / lost / duplicated / final states}, then details. */
  public String line(String scenario) {
    StringJoiner stateText = new StringJoiner("; ");
    states.forEach((server, counts) -> {
      StringJoiner each = new StringJoiner(" ");
      counts.forEach((state, n) -> each.add(state + "=" + n));
      stateText.add(server + " " + (counts.isEmpty() ? "-" : each.toString()));
    });
    StringJoiner answerText = new StringJoiner(" ");
    answers.forEach((answer, n) -> answerText.add(answer.replace(' ', ':') + "=" + n));
    return String.format(Locale.ROOT, "LEDGER %s: sent %d / accepted %d / delivered %d / lost %d / duplicated %d"
            + " / final states %s | failed on every sender server and not delivered %d, rejected %d, unresolved %d,"
            + " unsettled %d, duplicate pushes %d, duplicate history rows %d, unknown pushes %d, answers: %s | %s",
        scenario, sent, accepted, delivered, lost, duplicated, stateText, failedByRules, rejected, unresolved,
        unsettled, duplicatePushes, duplicateCopies, unknownPushes, answerText, clean() ? "OK" : "FAIL");
  }
}
