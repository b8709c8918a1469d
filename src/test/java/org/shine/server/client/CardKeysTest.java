package org.shine.server.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.dm.KeyFile;

/** The keys a client reads from a served card, v1 and v3 (PROTOCOL §4 v3). */
class CardKeysTest {
  private static final List<Map.Entry<String, String>> ROUTES = List.of(Map.entry("s1", "ws://127.0.0.1:1/ws"));
  private final KeyFile laptop = KeyFile.generate("ann");
  private final KeyFile phone = KeyFile.generate("ann");
  private final KeyFile old = KeyFile.generate("ann");
  private final KeyFile stolen = KeyFile.generate("ann");

  private static List<String> keysOf(CardKeys.Keys keys) {
    return keys.keys().stream().map(key -> java.util.Base64.getEncoder().encodeToString(key.encoded())).toList();
  }

  @Test
  @DisplayName("a v3 card gives its device and retired keys, never a revoked one")
  void v3Keys() {
    ObjectNode card = DeviceCard.first("ann", old.publicKeyB64(), null, ROUTES).addKey(laptop.publicKeyB64(), "l")
        .addKey(phone.publicKeyB64(), "p").addKey(stolen.publicKeyB64(), "s").retire(old.publicKeyB64(), 5)
        .revoke(stolen.publicKeyB64()).sign(laptop);

    CardKeys.Keys keys = CardKeys.of("ann", card);

    assertThat(keys.problem()).isNull();
    assertThat(keysOf(keys)).containsExactly(laptop.publicKeyB64(), phone.publicKeyB64(), old.publicKeyB64());
  }

  @Test
  @DisplayName("a v3 card with a bad signature, or signed by a key it does not list, gives no keys")
  void v3Refusals() {
    ObjectNode card = DeviceCard.first("ann", laptop.publicKeyB64(), null, ROUTES).sign(laptop);
    ObjectNode tampered = card.deepCopy().put("version", 7);
    ObjectNode foreign = DeviceCard.first("ann", laptop.publicKeyB64(), null, ROUTES).sign(stolen);

    assertThat(CardKeys.of("ann", card).keys()).hasSize(1);
    assertThat(CardKeys.of("ann", tampered).problem()).isEqualTo("ann's card is not signed by its key");
    assertThat(CardKeys.of("ann", foreign).problem()).isEqualTo("ann's card is malformed");
    assertThat(CardKeys.of("bob", card).problem()).contains("is not bob's");
  }

  @Test
  @DisplayName("a v1 card still gives its one key")
  void v1Keys() {
    CardKeys.Keys keys = CardKeys.of("ann", ShineClient.signedCard("ann", laptop, ROUTES, 3));

    assertThat(keysOf(keys)).containsExactly(laptop.publicKeyB64());
  }
}
