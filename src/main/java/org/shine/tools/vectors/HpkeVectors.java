package org.shine.tools.vectors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.shine.server.dm.BodyCipher;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.Hpke;
import org.shine.server.util.Json;

/**
 * Encrypted bodies for the other implementation to open (PROTOCOL §4: "Java and JS implementations pass each
 * other's vectors"): {@code bodies} sealed with {@link BodyCipher#sealBody} and {@code keyTransfers} with {@link
 * BodyCipher#sealKeyTransfer}, each with its recipient's raw private key, what its info is made of and the plaintext
 * it must open to. The browser's {@code web-tests/hpke-vectors.mjs} writes and checks the same format.
 */
public final class HpkeVectors {
  private static final Base64.Encoder BASE64 = Base64.getEncoder();
  private static final String BASE_KEY = "alice|bob|1700000000000|4242";
  private static final String[] TEXTS = {"hi bob", "Привет, ёжик 🦔 — «ok»", "", "long ".repeat(500)};

  private HpkeVectors() {
  }

  /** Fresh bodies (kinds 1 and 2, revisions 0 to 3, texts from empty to 2,500 characters) and one key transfer. */
  public static ObjectNode write() {
    ObjectNode file = Json.MAPPER.createObjectNode()
        .put("writer", "Java dm.BodyCipher (java -jar target/shine-tools.jar hpke-vectors write FILE)");
    ArrayNode bodies = file.putArray("bodies");
    for (int i = 0; i < TEXTS.length; i++) {
      Hpke.KeyPair owner = Hpke.generateKeyPair();
      DmKind kind = i % 2 == 0 ? DmKind.INCOMING : DmKind.OUTGOING;
      String plaintext = Json.MAPPER.createObjectNode().put("v", 1).put("text", TEXTS[i]).toString();
      byte[] body = BodyCipher.sealBody(utf8(plaintext), owner.publicKey(), BASE_KEY, kind, i);
      bodies.addObject()
          .put("privateKeyB64", BASE64.encodeToString(owner.privateKey()))
          .put("baseKey", BASE_KEY)
          .put("kind", kind.code())
          .put("revision", i)
          .put("plaintext", plaintext)
          .put("body", new String(body, StandardCharsets.UTF_8));
    }
    Hpke.KeyPair transfer = Hpke.generateKeyPair();
    String deviceKeyB64 = BASE64.encodeToString(new byte[32]);
    String secret = Json.MAPPER.createArrayNode().add(BASE64.encodeToString(Hpke.generateKeyPair().privateKey()))
        .toString();
    byte[] sealed = BodyCipher.sealKeyTransfer(utf8(secret), transfer.publicKey(), "bob", deviceKeyB64);
    file.putArray("keyTransfers").addObject()
        .put("privateKeyB64", BASE64.encodeToString(transfer.privateKey()))
        .put("login", "bob")
        .put("deviceKeyB64", deviceKeyB64)
        .put("plaintext", secret)
        .put("sealed", new String(sealed, StandardCharsets.UTF_8));
    return file;
  }

  /** What is wrong with a vector file: one line per body that does not open to its plaintext; empty when all do. */
  public static List<String> check(JsonNode file) {
    List<String> problems = new ArrayList<>();
    if (file.path("bodies").size() == 0 || file.path("keyTransfers").size() == 0) {
      problems.add("the file has no bodies or no key transfers");
    }
    int index = 0;
    for (JsonNode vector : file.path("bodies")) {
      String name = "body " + index++;
      try {
        DmKind kind = DmKind.fromCode(vector.path("kind").asInt());
        byte[] opened = BodyCipher.openBody(utf8(vector.path("body").asText()), keysOf(vector),
            vector.path("baseKey").asText(), kind, vector.path("revision").asLong());
        expect(problems, name, opened, vector);
      } catch (BodyCipher.OpenFailure | RuntimeException e) {
        problems.add(name + ": " + e.getMessage());
      }
    }
    index = 0;
    for (JsonNode vector : file.path("keyTransfers")) {
      String name = "key transfer " + index++;
      try {
        byte[] opened = BodyCipher.openKeyTransfer(utf8(vector.path("sealed").asText()), keysOf(vector),
            vector.path("login").asText(), vector.path("deviceKeyB64").asText());
        expect(problems, name, opened, vector);
      } catch (BodyCipher.OpenFailure | RuntimeException e) {
        problems.add(name + ": " + e.getMessage());
      }
    }
    return problems;
  }

  private static BodyCipher.PrivateKeys keysOf(JsonNode vector) {
    return BodyCipher.PrivateKeys.of(List.of(Base64.getDecoder().decode(vector.path("privateKeyB64").asText())));
  }

  private static void expect(List<String> problems, String name, byte[] opened, JsonNode vector) {
    String plaintext = vector.path("plaintext").asText();
    if (!plaintext.equals(new String(opened, StandardCharsets.UTF_8))) {
      problems.add(name + ": opens to something else than its plaintext " + plaintext);
    }
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
