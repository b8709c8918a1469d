package org.shine.tools.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.shine.server.util.Json;

/**
 * The one ledger, read as the fault suite reads it ({@link LedgerTotals}) and as the soak does ({@link
 * LedgerResult}).
 */
class MessageLedgerTest {

  /** The fault suite's {@code LEDGER} line: answers, copies on the recipient servers, sender copies' final states. */
  @Nested
  class FaultSuite {
    private static final String A = "alice|bob|1774700000123|1";
    private static final String B = "alice|bob|1774700000124|2";

    private static final List<String> RECIPIENT_SERVERS = List.of("s3", "s4");
      private static final List<String> SENDER_SERVERS = List.of("s1", "s2");

      private final MessageLedger ledger = new MessageLedger();

    private void bothCopies(String... baseKeys) {
      for (String server : RECIPIENT_SERVERS) {
        recipientHistory(server, baseKeys);
      }
    }

    private void recipientHistory(String server, String... baseKeys) {
      List<JsonNode> entries = new ArrayList<>();
      for (String baseKey : baseKeys) {
        entries.add(item(baseKey, 0, null));
      }
      ledger.observe(server, false, entries);
    }

    private void delivered(String... baseKeys) {
      for (String server : SENDER_SERVERS) {
        List<JsonNode> entries = new ArrayList<>();
        for (String baseKey : baseKeys) {
          entries.add(item(baseKey, 0, "delivered"));
        }
        ledger.observe(server, true, entries);
      }
    }

    private void senderStates(String server, String... keysAndStates) {
      List<JsonNode> entries = new ArrayList<>();
      for (int i = 0; i < keysAndStates.length; i += 2) {
        entries.add(item(keysAndStates[i], 0, keysAndStates[i + 1]));
      }
      ledger.observe(server, true, entries);
    }

    private void pushed(long sessionId, String messageKey) {
      ledger.pushed(Long.toString(sessionId), MessageLedger.baseKeyOf(messageKey), 0);
    }

    private LedgerTotals totals() {
      return ledger.totals(RECIPIENT_SERVERS, SENDER_SERVERS);
    }

    private boolean settled() {
      return ledger.settled(RECIPIENT_SERVERS, SENDER_SERVERS);
    }

    @Test
    @DisplayName("accepted pairs on both recipient servers once, delivered on both sender servers: a clean ledger")
    void clean() {
      ledger.sent(A);
      ledger.sent(B);
      ledger.retried("CONNECTION_CLOSED");
      ledger.accepted(A);
      ledger.accepted(B);
      bothCopies(A, B);
      delivered(A, B);
      pushed(1, A + "|1");
      pushed(2, A + "|1");

      LedgerTotals totals = totals();

      assertThat(settled()).isTrue();
      assertThat(totals.clean()).isTrue();
      assertThat(totals.delivered()).isEqualTo(2);
      assertThat(totals.answers()).containsEntry("200", 2L).containsEntry("CONNECTION_CLOSED", 1L);
      assertThat(totals.line("a"))
          .startsWith("LEDGER a: sent 2 / accepted 2 / delivered 2 / lost 0 / duplicated 0 / final states"
              + " s1 delivered=2; s2 delivered=2")
          .endsWith("OK");
    }

    @Test
    @DisplayName("an accepted pair missing on one recipient server is lost, and the ledger is not settled")
    void missingOnOneServerIsLost() {
      ledger.sent(A);
      ledger.accepted(A);
      recipientHistory("s3", A);
      delivered(A);

      LedgerTotals totals = totals();

      assertThat(settled()).isFalse();
      assertThat(totals.lost()).isEqualTo(1);
      assertThat(totals.clean()).isFalse();
      assertThat(totals.line("b")).contains("lost 1").endsWith("FAIL");
    }

    @Test
    @DisplayName("a pair failed on every sender server and missing at a recipient is failed by the rules, not lost;"
        + " failed on one sender server only, it is lost")
    void failedByTheRules() {
      ledger.sent(A);
      ledger.sent(B);
      ledger.accepted(A);
      ledger.accepted(B);
      recipientHistory("s3", A);
      senderStates("s1", A, "failed", B, "failed");
      senderStates("s2", A, "failed", B, "delivered");

      LedgerTotals totals = totals();

      assertThat(totals.failedByRules()).isEqualTo(1);
      assertThat(totals.lost()).isEqualTo(1);
      assertThat(settled()).isFalse();
    }

    @Test
    @DisplayName("one key twice in a history, or pushed twice to one session, is a duplicate; another session is not")
    void duplicates() {
      ledger.sent(A);
      ledger.sent(B);
      ledger.accepted(A);
      ledger.accepted(B);
      bothCopies(A, B);
      recipientHistory("s4", A, B, B);
      delivered(A, B);
      pushed(7, A + "|1");
      pushed(8, A + "|1");
      pushed(8, A + "|1");

      LedgerTotals totals = totals();

      assertThat(totals.duplicatePushes()).isEqualTo(1);
      assertThat(totals.duplicateCopies()).isEqualTo(1);
      assertThat(totals.duplicated()).isEqualTo(2);
      assertThat(totals.lost()).isZero();
      assertThat(totals.clean()).isFalse();
    }

    @Test
    @DisplayName("a pair still accepted on a sender server is unsettled; failed is final and settles")
    void senderStates() {
      ledger.sent(A);
      ledger.sent(B);
      ledger.accepted(A);
      ledger.accepted(B);
      bothCopies(A, B);
      senderStates("s1", A, "failed", B, "delivered");
      senderStates("s2", A, "delivered", B, "accepted");

      assertThat(settled()).isFalse();
      assertThat(totals().unsettled()).isEqualTo(1);

      senderStates("s2", B, "delivered");

      LedgerTotals totals = totals();
      assertThat(settled()).isTrue();
      assertThat(totals.clean()).isTrue();
      assertThat(totals.states().get("s1")).containsEntry("failed", 1L).containsEntry("delivered", 1L);
    }

    @Test
    @DisplayName("a refused pair is not looked for; one never answered is unresolved and fails the ledger")
    void refusedAndUnanswered() {
      ledger.sent(A);
      ledger.sent(B);
      ledger.rejected(A, 400, "CLOCK_SKEW");
      bothCopies();

      LedgerTotals totals = totals();

      assertThat(totals.rejected()).isEqualTo(1);
      assertThat(totals.unresolved()).isEqualTo(1);
      assertThat(totals.lost()).isZero();
      assertThat(totals.clean()).isFalse();
      assertThat(totals.answers()).containsEntry("400 CLOCK_SKEW", 1L);
    }

    @Test
    @DisplayName("a 200 after an earlier refusal on the other server still makes the pair accepted")
    void acceptedWins() {
      ledger.sent(A);
      ledger.rejected(A, 421, "NOT_ACCESS_SERVER");
      ledger.accepted(A);

      assertThat(totals().accepted()).isEqualTo(1);
    }

    @Test
    @DisplayName("a scenario in which nothing was accepted tested nothing and is not clean")
    void nothingAccepted() {
      ledger.sent(A);
      ledger.rejected(A, 400, "CLOCK_SKEW");

      assertThat(totals().clean()).isFalse();
    }

    @Test
    @DisplayName("pushes of keys the ledger never sent are counted apart, not as duplicates")
    void unknownPushes() {
      pushed(1, "carol|bob|1|1|1");
      pushed(1, "carol|bob|1|1|1");

      assertThat(totals().unknownPushes()).isEqualTo(2);
      assertThat(totals().duplicated()).isZero();
    }
  }

  /** The soak's report: revisions, receipts and tombstones as accepted, and where a copy is missing. */
  @Nested
  class Soak {
    private static final String FIRST = "a|b|1000|1";
    private static final String SECOND = "a|b|1001|2";
    private static final List<String> RECIPIENT_SERVERS = List.of("s3", "s4");
    private static final List<String> SENDER_SERVERS = List.of("s1", "s2");

    private MessageLedger ledger;

    @BeforeEach
    void twoAcceptedMessages() {
      ledger = new MessageLedger();
      ledger.sent(FIRST, "a", "b");
      ledger.sent(SECOND, "a", "b");
      ledger.accepted(FIRST, 0);
      ledger.accepted(SECOND, 0);
    }

    @Test
    @DisplayName("messages held once by all four servers at their accepted revision are delivered, nothing else")
    void allHeldEverywhere() {
      observeEverywhere(item(FIRST, 0, "delivered"), item(SECOND, 0, "delivered"));

      LedgerResult result = ledger.result(RECIPIENT_SERVERS, SENDER_SERVERS);

      assertThat(result.ok()).isTrue();
      assertThat(result.delivered()).isEqualTo(2);
      assertThat(result.finalStates()).containsOnly(entry("s1 delivered", 2L), entry("s2 delivered", 2L));
      assertThat(result.unsettled(Set.of("delivered"))).isZero();
    }

    @Test
    @DisplayName("an accepted message one recipient server lacks is lost, and named with the server that lacks it")
    void missingOnOneServer() {
      ledger.observe("s1", true, List.of(item(FIRST, 0, "delivered"), item(SECOND, 0, "delivered")));
      ledger.observe("s2", true, List.of(item(FIRST, 0, "delivered"), item(SECOND, 0, "delivered")));
      ledger.observe("s3", false, List.of(item(FIRST, 0, null), item(SECOND, 0, null)));
      ledger.observe("s4", false, List.of(item(FIRST, 0, null)));

      LedgerResult result = ledger.result(RECIPIENT_SERVERS, SENDER_SERVERS);

      assertThat(result.ok()).isFalse();
      assertThat(result.lost()).isEqualTo(1);
      assertThat(result.lostBy()).containsOnly(entry("s4/recipient", 1L));
    }

    @Test
    @DisplayName("one key twice in a history, or one key and revision pushed twice to one session, is a duplicate")
    void duplicates() {
      ledger.observe("s3", false, List.of(item(FIRST, 0, null), item(FIRST, 0, null)));
      ledger.pushed("b#1", FIRST, 0);
      ledger.pushed("b#1", FIRST, 1);
      ledger.pushed("b#2", FIRST, 0);
      ledger.pushed("b#1", FIRST, 0);

      LedgerResult result = ledger.result(List.of("s3"), List.of());

      assertThat(result.duplicatesInHistory()).isEqualTo(1);
      assertThat(result.duplicatePushes()).isEqualTo(1);
      assertThat(result.ok()).isFalse();
    }

    @Test
    @DisplayName("a stale revision, a missing receipt or tombstone is a wrong entry; a change given up unanswered is"
        + " checked for presence only")
    void wrongEntries() {
      ledger.accepted(FIRST, 2);
      ledger.read(FIRST);
      ledger.deleted(SECOND, false);
      ledger.observe("s3", false, List.of(item(FIRST, 1, null), item(SECOND, 0, null)));

      LedgerResult result = ledger.result(List.of("s3"), List.of());

      assertThat(result.problems()).containsOnly(entry("s3/recipient stale revision", 1L),
          entry("s3/recipient receipt missing", 1L), entry("s3/recipient tombstone missing", 1L));

      ledger.clearObservations();
      ledger.uncertain(FIRST);
      ledger.uncertain(SECOND);
      ledger.observe("s3", false, List.of(item(FIRST, 1, null), item(SECOND, 0, null)));

      assertThat(ledger.result(List.of("s3"), List.of()).ok()).isTrue();
    }

    @Test
    @DisplayName("a sender copy still accepted is unsettled; a message never accepted is not counted at all")
    void unsettledAndUnaccepted() {
      ledger.sent("a|b|1002|3", "a", "b");
      observeEverywhere(item(FIRST, 0, "delivered"), item(SECOND, 0, "accepted"));

      LedgerResult result = ledger.result(RECIPIENT_SERVERS, SENDER_SERVERS);

      assertThat(result.sent()).isEqualTo(3);
      assertThat(result.accepted()).isEqualTo(2);
      assertThat(result.unsettled(Set.of("delivered"))).isEqualTo(2);
    }

    private void observeEverywhere(JsonNode... entries) {
      for (String server : SENDER_SERVERS) {
        ledger.observe(server, true, List.of(entries));
      }
      for (String server : RECIPIENT_SERVERS) {
        ledger.observe(server, false, List.of(entries));
      }
    }
  }

  static JsonNode item(String baseKey, long revision, String deliveryState) {
    ObjectNode entry = Json.MAPPER.createObjectNode().put("baseKey", baseKey).put("revision", revision)
        .put("read", false).put("deleted", false);
    if (deliveryState != null) {
      entry.put("deliveryState", deliveryState);
    }
    return entry;
  }
}
