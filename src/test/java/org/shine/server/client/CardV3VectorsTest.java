package org.shine.server.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.KeyFile;
import org.shine.server.util.Json;

/**
 * The shared v3 card vectors of {@code dm/card-v3-vectors.json}: cards {@link DeviceCard} signed, with their signed
 * text, which the web chat must sign byte for byte and read the keys of ({@code web-tests/cards.test.mjs} runs on the
 * same file). Ed25519 signatures are deterministic, so the file is checked, not just read. Regenerate with
 * {@code mvn -B surefire:test -Dtest=CardV3VectorsTest -Dshine.writeVectors=true} (run from the project's folder).
 */
class CardV3VectorsTest {
  private static final Path FILE = Path.of("src/test/resources/dm/card-v3-vectors.json");
  private static final List<Map.Entry<String, String>> ROUTES = List.of(
      Map.entry("127.0.0.1", "ws://127.0.0.1:7101/ws"), Map.entry("127.0.0.2", "ws://127.0.0.2:7102/ws"));

  private static KeyFile key(int seed) {
    byte[] privateKey = new byte[Ed25519Signer.PRIVATE_KEY_SIZE];
    java.util.Arrays.fill(privateKey, (byte) seed);
    return new KeyFile(Optional.of("vera"), Ed25519Signer.publicKeyOf(privateKey), privateKey);
  }

  /** The cards: a first card, one with a second device, a recovery key and an encryption key, a rotation and a
   * revocation, and a recovery in epoch 1. */
  private static List<Map.Entry<ObjectNode, KeyFile>> cards() {
    KeyFile laptop = key(1);
    KeyFile phone = key(2);
    KeyFile recovery = key(3);
    KeyFile fresh = key(4);
    KeyFile rescued = key(5);
    String encryption = Base64.getEncoder().encodeToString(new byte[32]).replace('A', 'E');
    List<Map.Entry<ObjectNode, KeyFile>> cards = new ArrayList<>();
    ObjectNode first = DeviceCard.first("vera", laptop.publicKeyB64(), "laptop", ROUTES).sign(laptop);
    cards.add(Map.entry(first, laptop));
    ObjectNode second = DeviceCard.next(first).addKey(phone.publicKeyB64(), "phone")
        .recoveryKey(recovery.publicKeyB64()).encryptionKey(encryption).sign(laptop);
    cards.add(Map.entry(second, laptop));
    ObjectNode rotated = DeviceCard.next(second).addKey(fresh.publicKeyB64(), "laptop 2")
        .retire(laptop.publicKeyB64(), 1_800_000_000_000L).revoke(phone.publicKeyB64()).sign(laptop);
    cards.add(Map.entry(rotated, laptop));
    ObjectNode recovered = DeviceCard.next(rotated).recoverTo(rescued.publicKeyB64(), "after recovery").version(1)
        .sign(recovery);
    cards.add(Map.entry(recovered, recovery));
    return cards;
  }

  private static JsonNode vectors() {
    ObjectNode root = Json.MAPPER.createObjectNode();
    root.put("note", "v3 cards signed by the Java DeviceCard (PROTOCOL §4 v3); CardV3VectorsTest checks them");
    ArrayNode list = root.putArray("cards");
    for (Map.Entry<ObjectNode, KeyFile> entry : cards()) {
      ObjectNode card = entry.getKey();
      ObjectNode vector = list.addObject();
      vector.set("card", card);
      vector.put("signerPrivateKeyB64", Base64.getEncoder().encodeToString(entry.getValue().privateKey()));
      vector.put("signedText", new String(signedText(card), StandardCharsets.UTF_8));
      ArrayNode verifying = vector.putArray("verifyingKeysB64");
      CardKeys.of("vera", card).keys().forEach(key -> verifying.add(Base64.getEncoder().encodeToString(
          key.encoded())));
    }
    return root;
  }

  private static byte[] signedText(ObjectNode card) {
    return org.shine.server.directory.CardJson.parse(card).signedBytes();
  }

  @Test
  @DisplayName("the vectors file is what DeviceCard signs today; each card verifies and gives its device and retired"
      + " keys")
  void vectorsHold() throws IOException {
    JsonNode expected = vectors();
    if (Boolean.getBoolean("shine.writeVectors")) {
      Files.writeString(FILE, Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(expected) + "\n");
    }
    JsonNode stored = Json.MAPPER.readTree(Files.readString(FILE));

    assertThat(stored.toString()).isEqualTo(expected.toString());
    for (JsonNode vector : stored.get("cards")) {
      byte[] signature = Base64.getDecoder().decode(vector.at("/card/signatureB64").asText());
      byte[] signer = Base64.getDecoder().decode(vector.at("/card/signerKeyB64").asText());
      assertThat(Ed25519Signer.verify(signer, vector.get("signedText").asText().getBytes(StandardCharsets.UTF_8),
          signature)).isTrue();
      assertThat(CardKeys.of("vera", vector.get("card")).problem()).isNull();
    }
  }
}
