package org.shine.tools.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.util.Json;

class MessageLedgerTest {
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

    MessageLedger.Result result = ledger.result(RECIPIENT_SERVERS, SENDER_SERVERS);

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

    MessageLedger.Result result = ledger.result(RECIPIENT_SERVERS, SENDER_SERVERS);

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

    MessageLedger.Result result = ledger.result(List.of("s3"), List.of());

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

    MessageLedger.Result result = ledger.result(List.of("s3"), List.of());

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

    MessageLedger.Result result = ledger.result(RECIPIENT_SERVERS, SENDER_SERVERS);

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

  private static JsonNode item(String baseKey, long revision, String deliveryState) {
    ObjectNode entry = Json.MAPPER.createObjectNode().put("baseKey", baseKey).put("revision", revision)
        .put("read", false).put("deleted", false);
    if (deliveryState != null) {
      entry.put("deliveryState", deliveryState);
    }
    return entry;
  }
}
