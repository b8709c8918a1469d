package org.shine.tools.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class ChaosLedgerTest {
  private static final String A = "alice|bob|1774700000123|1";
  private static final String B = "alice|bob|1774700000124|2";

  private final ChaosLedger ledger = new ChaosLedger(List.of("s3", "s4"), List.of("s1", "s2"));

  private void bothCopies(String... baseKeys) {
    for (String server : List.of("s3", "s4")) {
      Map<String, Integer> copies = new java.util.HashMap<>();
      for (String baseKey : baseKeys) {
        copies.put(baseKey + "|1", 1);
      }
      ledger.recipientHistory(server, copies);
    }
  }

  private void delivered(String... baseKeys) {
    for (String server : List.of("s1", "s2")) {
      Map<String, String> states = new java.util.HashMap<>();
      for (String baseKey : baseKeys) {
        states.put(baseKey, "delivered");
      }
      ledger.senderStates(server, states);
    }
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
    ledger.pushed(1, A + "|1");
    ledger.pushed(2, A + "|1");

    ChaosLedger.Totals totals = ledger.totals();

    assertThat(ledger.settled()).isTrue();
    assertThat(totals.clean()).isTrue();
    assertThat(totals.delivered()).isEqualTo(2);
    assertThat(totals.answers()).containsEntry("200", 2L).containsEntry("CONNECTION_CLOSED", 1L);
    assertThat(ChaosLedger.line("a", totals))
        .startsWith("LEDGER a: sent 2 / accepted 2 / delivered 2 / lost 0 / duplicated 0 / final states"
            + " s1 delivered=2; s2 delivered=2")
        .endsWith("OK");
  }

  @Test
  @DisplayName("an accepted pair missing on one recipient server is lost, and the ledger is not settled")
  void missingOnOneServerIsLost() {
    ledger.sent(A);
    ledger.accepted(A);
    ledger.recipientHistory("s3", Map.of(A + "|1", 1));
    delivered(A);

    ChaosLedger.Totals totals = ledger.totals();

    assertThat(ledger.settled()).isFalse();
    assertThat(totals.lost()).isEqualTo(1);
    assertThat(totals.clean()).isFalse();
    assertThat(ChaosLedger.line("b", totals)).contains("lost 1").endsWith("FAIL");
  }

  @Test
  @DisplayName("a pair failed on every sender server and missing at a recipient is failed by the rules, not lost;"
      + " failed on one sender server only, it is lost")
  void failedByTheRules() {
    ledger.sent(A);
    ledger.sent(B);
    ledger.accepted(A);
    ledger.accepted(B);
    ledger.recipientHistory("s3", Map.of(A + "|1", 1));
    ledger.senderStates("s1", Map.of(A, "failed", B, "failed"));
    ledger.senderStates("s2", Map.of(A, "failed", B, "delivered"));

    ChaosLedger.Totals totals = ledger.totals();

    assertThat(totals.failedByRules()).isEqualTo(1);
    assertThat(totals.lost()).isEqualTo(1);
    assertThat(ledger.settled()).isFalse();
  }

  @Test
  @DisplayName("one key twice in a history, or pushed twice to one session, is a duplicate; another session is not")
  void duplicates() {
    ledger.sent(A);
    ledger.sent(B);
    ledger.accepted(A);
    ledger.accepted(B);
    bothCopies(A, B);
    ledger.recipientHistory("s4", Map.of(B + "|1", 2));
    delivered(A, B);
    ledger.pushed(7, A + "|1");
    ledger.pushed(8, A + "|1");
    ledger.pushed(8, A + "|1");

    ChaosLedger.Totals totals = ledger.totals();

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
    ledger.senderStates("s1", Map.of(A, "failed", B, "delivered"));
    ledger.senderStates("s2", Map.of(A, "delivered", B, "accepted"));

    assertThat(ledger.settled()).isFalse();
    assertThat(ledger.totals().unsettled()).isEqualTo(1);

    ledger.senderStates("s2", Map.of(B, "delivered"));

    ChaosLedger.Totals totals = ledger.totals();
    assertThat(ledger.settled()).isTrue();
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

    ChaosLedger.Totals totals = ledger.totals();

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

    assertThat(ledger.totals().accepted()).isEqualTo(1);
  }

  @Test
  @DisplayName("a scenario in which nothing was accepted tested nothing and is not clean")
  void nothingAccepted() {
    ledger.sent(A);
    ledger.rejected(A, 400, "CLOCK_SKEW");

    assertThat(ledger.totals().clean()).isFalse();
  }

  @Test
  @DisplayName("pushes of keys the ledger never sent are counted apart, not as duplicates")
  void unknownPushes() {
    ledger.pushed(1, "carol|bob|1|1|1");
    ledger.pushed(1, "carol|bob|1|1|1");

    assertThat(ledger.totals().unknownPushes()).isEqualTo(2);
    assertThat(ledger.totals().duplicated()).isZero();
  }
}
