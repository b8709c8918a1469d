package org.shine.server.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.dm.KeyFile;

/** Whether a contact's newer card follows from the pinned one (PROTOCOL §4 v3, "Clients"). */
class CardChainTest {
  private static final List<Map.Entry<String, String>> ROUTES = List.of(Map.entry("s1", "ws://127.0.0.1:1/ws"));
  private final KeyFile laptop = KeyFile.generate("bob");
  private final KeyFile phone = KeyFile.generate("bob");
  private final KeyFile recovery = KeyFile.generate("bob");
  private final KeyFile thief = KeyFile.generate("bob");
  private final ObjectNode first = DeviceCard.first("bob", laptop.publicKeyB64(), "laptop", ROUTES)
      .recoveryKey(recovery.publicKeyB64()).sign(laptop);

  @Test
  @DisplayName("a version signed by a device key of the card before, keeping its keys, follows")
  void sameEpoch() {
    ObjectNode added = DeviceCard.next(first).addKey(phone.publicKeyB64(), "phone").sign(laptop);
    ObjectNode rotated = DeviceCard.next(added).retire(laptop.publicKeyB64(), 5).sign(phone);

    assertThat(CardChain.problem(first, List.of(added, rotated))).isEmpty();
    assertThat(CardChain.stepProblem(first, added)).isEmpty();
  }

  @Test
  @DisplayName("a version signed by a key the card before did not list does not follow")
  void foreignSigner() {
    ObjectNode stolen = DeviceCard.next(first).addKey(thief.publicKeyB64(), "t").sign(thief);

    assertThat(CardChain.stepProblem(first, stolen)).isPresent();
  }

  @Test
  @DisplayName("a card that silently drops a device key does not follow")
  void droppedKey() {
    ObjectNode two = DeviceCard.next(first).addKey(phone.publicKeyB64(), "phone").sign(laptop);
    ObjectNode dropped = DeviceCard.first("bob", phone.publicKeyB64(), "phone", ROUTES)
        .recoveryKey(recovery.publicKeyB64()).version(3).sign(phone);

    assertThat(CardChain.stepProblem(two, dropped)).get().asString().contains("dropped a device key");
  }

  @Test
  @DisplayName("a new epoch follows only when the recovery key of the card before signs it")
  void recovery() {
    ObjectNode recovered = DeviceCard.next(first).recoverTo(phone.publicKeyB64(), "phone").sign(recovery);
    ObjectNode byDevice = DeviceCard.next(first).recoverTo(phone.publicKeyB64(), "phone").sign(laptop);
    ObjectNode skipped = DeviceCard.next(first).recoverTo(thief.publicKeyB64(), "t").recoverTo(
        phone.publicKeyB64(), "phone").sign(recovery);

    assertThat(CardChain.stepProblem(first, recovered)).isEmpty();
    assertThat(CardChain.stepProblem(first, byDevice)).isPresent();
    assertThat(CardChain.stepProblem(first, skipped)).get().asString().contains("skips from epoch 0 to 2");
  }

  @Test
  @DisplayName("a v1 card moves to v3 when its key signs the v3 card and stays in it")
  void fromV1() {
    ObjectNode v1 = ShineClient.signedCard("bob", laptop, ROUTES, 1);
    ObjectNode v3 = DeviceCard.next(v1).encryptionKey(null).sign(laptop);
    ObjectNode v3ByOther = DeviceCard.first("bob", phone.publicKeyB64(), null, ROUTES).version(2).sign(phone);

    assertThat(CardChain.stepProblem(v1, v3)).isEmpty();
    assertThat(CardChain.stepProblem(v1, v3ByOther)).isPresent();
  }

  @Test
  @DisplayName("one bad link breaks the chain; the same card again follows, another card in its place does not")
  void chainAndSamePlace() {
    ObjectNode added = DeviceCard.next(first).addKey(phone.publicKeyB64(), "phone").sign(laptop);
    ObjectNode forged = DeviceCard.next(added).addKey(thief.publicKeyB64(), "t").sign(thief);
    ObjectNode rival = DeviceCard.next(first).addKey(thief.publicKeyB64(), "t").sign(laptop);
    JsonNode relabelled = DeviceCard.next(first).label(laptop.publicKeyB64(), "other").version(1).sign(laptop);

    assertThat(CardChain.problem(first, List.of(added, forged))).isPresent();
    assertThat(CardChain.stepProblem(first, relabelled)).isEmpty();
    assertThat(CardChain.stepProblem(added, rival)).get().asString().contains("two different cards");
    assertThat(CardChain.stepProblem(added, first)).get().asString().contains("older");
  }

  @Test
  @DisplayName("a card whose own signature does not verify does not follow")
  void badSignature() {
    ObjectNode added = DeviceCard.next(first).addKey(phone.publicKeyB64(), "phone").sign(laptop);
    added.put("version", 7);

    assertThat(CardChain.stepProblem(first, added)).isPresent();
  }
}
