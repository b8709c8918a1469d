package org.shine.server.dm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.ThrowingSupplier;
import org.shine.server.util.Json;

/** {@link BodyCipher}: the encrypted body's format, what opens it and why it does not open. */
class BodyCipherTest {
  private static final String BASE_KEY = "alice|bob|1700000000000|42";
  private static final byte[] BODY = "{\"v\":1,\"text\":\"hi bob\"}".getBytes(StandardCharsets.UTF_8);
  private final Hpke.KeyPair bob = Hpke.generateKeyPair();
  private final BodyCipher.PrivateKeys bobKeys = BodyCipher.PrivateKeys.of(List.of(bob.privateKey()));

  private static AbstractThrowableAssert<?, ?> assertFails(ThrowingSupplier<byte[]> open,
      BodyCipher.Failure failure) {
    return assertThatThrownBy(open::get).isInstanceOfSatisfying(BodyCipher.OpenFailure.class,
        e -> assertThat(e.failure()).isEqualTo(failure));
  }

  private static byte[] withField(byte[] body, String field, String value) throws IOException {
    ObjectNode node = (ObjectNode) Json.MAPPER.readTree(body);
    if (value == null) {
      node.remove(field);
    } else {
      node.put(field, value);
    }
    return Json.MAPPER.writeValueAsBytes(node);
  }

  @Test
  @DisplayName("a sealed body is the v2 JSON with the key's kid, a 32-byte enc and the ciphertext, and opens back")
  void roundTrip() throws Exception {
    byte[] sealed = BodyCipher.sealBody(BODY, bob.publicKey(), BASE_KEY, DmKind.INCOMING, 0);

    JsonNode node = Json.MAPPER.readTree(sealed);
    assertThat(node.fieldNames()).toIterable().containsExactly("v", "alg", "kid", "encB64", "ctB64");
    assertThat(node.get("v").asInt()).isEqualTo(2);
    assertThat(node.get("alg").asText()).isEqualTo("hpke-x25519-sha256-aes128gcm");
    assertThat(node.get("kid").asText()).isEqualTo(BodyCipher.kid(bob.publicKey())).hasSize(12).endsWith("=");
    assertThat(Base64.getDecoder().decode(node.get("encB64").asText())).hasSize(32);
    assertThat(Base64.getDecoder().decode(node.get("ctB64").asText())).hasSize(BODY.length + 16);
    assertThat(BodyCipher.isEncrypted(sealed)).isTrue();
    assertThat(BodyCipher.openBody(sealed, bobKeys, BASE_KEY, DmKind.INCOMING, 0)).isEqualTo(BODY);
  }

  @Test
  @DisplayName("the kid is base64 of the first 8 bytes of SHA-256 of the raw public key")
  void kid() throws Exception {
    byte[] publicKey = new byte[32];
    byte[] digest = MessageDigest.getInstance("SHA-256").digest(publicKey);
    assertThat(BodyCipher.kid(publicKey)).isEqualTo(Base64.getEncoder().encodeToString(Arrays.copyOf(digest, 8)));
  }

  @Test
  @DisplayName("a body opens only for its own baseKey, kind and revision")
  void infoBindsTheCopy() {
    byte[] sealed = BodyCipher.sealBody(BODY, bob.publicKey(), BASE_KEY, DmKind.INCOMING, 3);
    assertFails(() -> BodyCipher.openBody(sealed, bobKeys, "alice|bob|1700000000000|43", DmKind.INCOMING, 3),
        BodyCipher.Failure.AUTHENTICATION_FAILED).hasMessageContaining("does not open");
    assertFails(() -> BodyCipher.openBody(sealed, bobKeys, BASE_KEY, DmKind.OUTGOING, 3),
        BodyCipher.Failure.AUTHENTICATION_FAILED);
    assertFails(() -> BodyCipher.openBody(sealed, bobKeys, BASE_KEY, DmKind.INCOMING, 4),
        BodyCipher.Failure.AUTHENTICATION_FAILED);
    assertFails(() -> BodyCipher.openKeyTransfer(sealed, bobKeys, "bob", "key"),
        BodyCipher.Failure.AUTHENTICATION_FAILED);
  }

  @Test
  @DisplayName("a body sealed to a key this device lacks fails as 'cannot decrypt on this device'")
  void unknownKid() {
    byte[] sealed = BodyCipher.sealBody(BODY, Hpke.generateKeyPair().publicKey(), BASE_KEY, DmKind.INCOMING, 0);
    assertFails(() -> BodyCipher.openBody(sealed, bobKeys, BASE_KEY, DmKind.INCOMING, 0),
        BodyCipher.Failure.UNKNOWN_KEY).hasMessageStartingWith("cannot decrypt on this device");
  }

  @Test
  @DisplayName("a device with its old and new keys opens bodies sealed to either")
  void oldKeysStillOpen() throws Exception {
    Hpke.KeyPair rotated = Hpke.generateKeyPair();
    BodyCipher.PrivateKeys both = BodyCipher.PrivateKeys.of(List.of(bob.privateKey(), rotated.privateKey()));
    byte[] old = BodyCipher.sealBody(BODY, bob.publicKey(), BASE_KEY, DmKind.INCOMING, 0);
    byte[] fresh = BodyCipher.sealBody(BODY, rotated.publicKey(), BASE_KEY, DmKind.OUTGOING, 1);
    assertThat(BodyCipher.openBody(old, both, BASE_KEY, DmKind.INCOMING, 0)).isEqualTo(BODY);
    assertThat(BodyCipher.openBody(fresh, both, BASE_KEY, DmKind.OUTGOING, 1)).isEqualTo(BODY);
  }

  @Test
  @DisplayName("a changed ciphertext or enc does not authenticate")
  void tampered() throws Exception {
    byte[] sealed = BodyCipher.sealBody(BODY, bob.publicKey(), BASE_KEY, DmKind.INCOMING, 0);
    JsonNode node = Json.MAPPER.readTree(sealed);
    byte[] ciphertext = Base64.getDecoder().decode(node.get("ctB64").asText());
    ciphertext[ciphertext.length - 1] ^= 1;
    byte[] changedCt = withField(sealed, "ctB64", Base64.getEncoder().encodeToString(ciphertext));
    byte[] changedEnc = withField(sealed, "encB64", Base64.getEncoder().encodeToString(
        Hpke.generateKeyPair().publicKey()));
    assertFails(() -> BodyCipher.openBody(changedCt, bobKeys, BASE_KEY, DmKind.INCOMING, 0),
        BodyCipher.Failure.AUTHENTICATION_FAILED).hasMessageContaining("does not authenticate");
    assertFails(() -> BodyCipher.openBody(changedEnc, bobKeys, BASE_KEY, DmKind.INCOMING, 0),
        BodyCipher.Failure.AUTHENTICATION_FAILED);
  }

  @Test
  @DisplayName("a v1 body, text or JSON that is not a v2 body is not encrypted; a v2 body of another alg is, and does"
      + " not open (never shown as text)")
  void notEncrypted() {
    for (String body : new String[] {"{\"v\":1,\"text\":\"hi\"}", "plain old text", "", "[2]",
        "{\"v\":\"2\",\"alg\":\"hpke-x25519-sha256-aes128gcm\"}"}) {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      assertThat(BodyCipher.isEncrypted(bytes)).as(body).isFalse();
      assertFails(() -> BodyCipher.openBody(bytes, bobKeys, BASE_KEY, DmKind.INCOMING, 0),
          BodyCipher.Failure.NOT_ENCRYPTED).hasMessageContaining("not an encrypted body");
    }
    for (String body : new String[] {"{\"v\":2}", "{\"v\":2,\"alg\":\"other\"}"}) {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      assertThat(BodyCipher.isEncrypted(bytes)).as(body).isTrue();
      assertFails(() -> BodyCipher.openBody(bytes, bobKeys, BASE_KEY, DmKind.INCOMING, 0),
          BodyCipher.Failure.MALFORMED).hasMessageContaining("is not hpke-x25519-sha256-aes128gcm");
    }
  }

  @Test
  @DisplayName("a v2 envelope with a missing field, bad base64 or wrong sizes is malformed, with the field named")
  void malformed() throws Exception {
    byte[] sealed = BodyCipher.sealBody(BODY, bob.publicKey(), BASE_KEY, DmKind.INCOMING, 0);
    Object[][] cases = {
        {withField(sealed, "kid", null), "kid is missing"},
        {withField(sealed, "encB64", null), "encB64 is missing"},
        {withField(sealed, "ctB64", "not base64!"), "ctB64 is not padded standard base64"},
        {withField(sealed, "ctB64", "A".repeat(22)), "ctB64 is not padded standard base64"}, // 16 bytes, unpadded
        {withField(sealed, "encB64", Base64.getEncoder().encodeToString(new byte[31])), "encB64 is 31 bytes"},
        {withField(sealed, "ctB64", Base64.getEncoder().encodeToString(new byte[15])),
            "ctB64 is 15 bytes, shorter than the 16-byte tag"},
    };
    for (Object[] c : cases) {
      byte[] body = (byte[]) c[0];
      assertThat(BodyCipher.isEncrypted(body)).isTrue();
      assertFails(() -> BodyCipher.openBody(body, bobKeys, BASE_KEY, DmKind.INCOMING, 0),
          BodyCipher.Failure.MALFORMED).hasMessageContaining("malformed encrypted body: " + c[1]);
    }
  }

  @Test
  @DisplayName("key transfer: sealed to the transfer key for one login and device key, opened only for those")
  void keyTransfer() throws Exception {
    Hpke.KeyPair transfer = Hpke.generateKeyPair();
    BodyCipher.PrivateKeys newDevice = BodyCipher.PrivateKeys.of(List.of(transfer.privateKey()));
    byte[] secret = "{\"keys\":[\"...\"]}".getBytes(StandardCharsets.UTF_8);
    byte[] sealed = BodyCipher.sealKeyTransfer(secret, transfer.publicKey(), "bob", "DEVICEKEY=");
    assertThat(BodyCipher.openKeyTransfer(sealed, newDevice, "bob", "DEVICEKEY=")).isEqualTo(secret);
    assertFails(() -> BodyCipher.openKeyTransfer(sealed, newDevice, "bob", "OTHERKEY="),
        BodyCipher.Failure.AUTHENTICATION_FAILED);
    assertFails(() -> BodyCipher.openKeyTransfer(sealed, newDevice, "eve", "DEVICEKEY="),
        BodyCipher.Failure.AUTHENTICATION_FAILED);
  }

  @Test
  @DisplayName("X25519 keys are raw 32 bytes and the public key follows from the private one")
  void keys() {
    assertThat(bob.privateKey()).hasSize(32);
    assertThat(bob.publicKey()).hasSize(32);
    assertThat(Hpke.publicKeyOf(bob.privateKey())).isEqualTo(bob.publicKey());
    assertThatThrownBy(() -> Hpke.publicKeyOf(new byte[31])).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("32 bytes");
  }
}
