package org.shine.server.dm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.util.Json;

/**
 * {@link Hpke} against RFC 9180's own vectors for the suite (Appendix A.1.1, copied into
 * {@code hpke/rfc9180-a1-base.json}): every intermediate value and every listed encryption and export.
 */
class HpkeTest {
  private static final HexFormat HEX = HexFormat.of();
  private static final byte[] NONE = new byte[0];
  private static JsonNode vector;

  @BeforeAll
  static void readVector() throws IOException {
    try (InputStream in = HpkeTest.class.getResourceAsStream("/hpke/rfc9180-a1-base.json")) {
      vector = Json.MAPPER.readTree(in);
    }
  }

  private static byte[] hex(String field) {
    return HEX.parseHex(vector.get(field).asText());
  }

  private static byte[] hex(JsonNode node, String field) {
    return HEX.parseHex(node.get(field).asText());
  }

  @Test
  @DisplayName("DeriveKeyPair turns the vector's ikmE and ikmR into its skEm/pkEm and skRm/pkRm")
  void deriveKeyPair() {
    assertThat(vector.get("mode").asInt()).isZero();
    assertThat(vector.get("kem_id").asInt()).isEqualTo(0x20);
    Hpke.KeyPair ephemeral = Hpke.deriveKeyPair(hex("ikmE"));
    Hpke.KeyPair recipient = Hpke.deriveKeyPair(hex("ikmR"));
    assertThat(HEX.formatHex(ephemeral.privateKey())).isEqualTo(vector.get("skEm").asText());
    assertThat(HEX.formatHex(ephemeral.publicKey())).isEqualTo(vector.get("pkEm").asText());
    assertThat(HEX.formatHex(recipient.privateKey())).isEqualTo(vector.get("skRm").asText());
    assertThat(HEX.formatHex(recipient.publicKey())).isEqualTo(vector.get("pkRm").asText());
    assertThat(Hpke.publicKeyOf(hex("skRm"))).isEqualTo(hex("pkRm"));
  }

  @Test
  @DisplayName("Encap and Decap give the vector's enc and shared_secret; the key schedule its key, nonce and secret")
  void keySchedule() throws HpkeOpenException {
    Hpke.KeyPair ephemeral = new Hpke.KeyPair(hex("skEm"), hex("pkEm"));
    Hpke.Encapsulation encapsulation = Hpke.encap(hex("pkRm"), ephemeral);
    assertThat(encapsulation.enc()).isEqualTo(hex("enc"));
    assertThat(encapsulation.sharedSecret()).isEqualTo(hex("shared_secret"));
    assertThat(Hpke.decap(hex("enc"), hex("skRm"))).isEqualTo(hex("shared_secret"));

    Hpke.Context context = Hpke.keySchedule(encapsulation.sharedSecret(), hex("info"));
    assertThat(HEX.formatHex(context.key())).isEqualTo(vector.get("key").asText());
    assertThat(HEX.formatHex(context.baseNonce())).isEqualTo(vector.get("base_nonce").asText());
    assertThat(HEX.formatHex(context.exporterSecret())).isEqualTo(vector.get("exporter_secret").asText());
  }

  @Test
  @DisplayName("every listed encryption (sequence numbers 0 to 256) seals to the vector's ct and opens back")
  void encryptions() throws HpkeOpenException {
    Hpke.Context sender = Hpke.keySchedule(Hpke.encap(hex("pkRm"), new Hpke.KeyPair(hex("skEm"), hex("pkEm")))
        .sharedSecret(), hex("info"));
    Hpke.Context recipient = Hpke.keySchedule(Hpke.decap(hex("enc"), hex("skRm")), hex("info"));
    assertThat(vector.get("encryptions")).hasSizeGreaterThanOrEqualTo(6);
    for (JsonNode encryption : vector.get("encryptions")) {
      long sequence = encryption.get("sequence_number").asLong();
      byte[] aad = hex(encryption, "aad");
      assertThat(HEX.formatHex(sender.nonce(sequence))).as("nonce %d", sequence)
          .isEqualTo(encryption.get("nonce").asText());
      assertThat(HEX.formatHex(sender.seal(sequence, aad, hex(encryption, "pt")))).as("ct %d", sequence)
          .isEqualTo(encryption.get("ct").asText());
      assertThat(recipient.open(sequence, aad, hex(encryption, "ct"))).isEqualTo(hex(encryption, "pt"));
    }
  }

  @Test
  @DisplayName("every listed export gives the vector's exported_value")
  void exports() {
    Hpke.Context context = Hpke.keySchedule(hex("shared_secret"), hex("info"));
    for (JsonNode export : vector.get("exports")) {
      assertThat(HEX.formatHex(context.export(hex(export, "exporter_context"), export.get("L").asInt())))
          .isEqualTo(export.get("exported_value").asText());
    }
  }

  @Test
  @DisplayName("single-shot seal with the vector's ephemeral key is its first encryption; open reverses it")
  void singleShot() throws HpkeOpenException {
    JsonNode first = vector.get("encryptions").get(0);
    Hpke.Sealed sealed = Hpke.seal(hex("pkRm"), hex("info"), hex(first, "aad"), hex(first, "pt"),
        new Hpke.KeyPair(hex("skEm"), hex("pkEm")));
    assertThat(sealed.enc()).isEqualTo(hex("enc"));
    assertThat(sealed.ciphertext()).isEqualTo(hex(first, "ct"));
    assertThat(Hpke.open(sealed.enc(), hex("skRm"), hex("info"), hex(first, "aad"), sealed.ciphertext()))
        .isEqualTo(hex(first, "pt"));
  }

  @Test
  @DisplayName("a fresh seal opens with the recipient's key only, under the same info and aad, unaltered")
  void openRefusesWhatDoesNotAuthenticate() throws HpkeOpenException {
    Hpke.KeyPair recipient = Hpke.generateKeyPair();
    byte[] info = "info".getBytes(StandardCharsets.UTF_8);
    byte[] plaintext = "hello".getBytes(StandardCharsets.UTF_8);
    Hpke.Sealed sealed = Hpke.seal(recipient.publicKey(), info, NONE, plaintext);
    assertThat(sealed.enc()).hasSize(Hpke.ENC_SIZE);
    assertThat(sealed.ciphertext()).hasSize(plaintext.length + Hpke.TAG_SIZE);
    assertThat(Hpke.open(sealed.enc(), recipient.privateKey(), info, NONE, sealed.ciphertext())).isEqualTo(plaintext);

    byte[] altered = sealed.ciphertext().clone();
    altered[0] ^= 1;
    assertThatThrownBy(() -> Hpke.open(sealed.enc(), recipient.privateKey(), info, NONE, altered))
        .isInstanceOf(HpkeOpenException.class).hasMessageContaining("does not authenticate");
    assertThatThrownBy(() -> Hpke.open(sealed.enc(), Hpke.generateKeyPair().privateKey(), info, NONE,
        sealed.ciphertext())).isInstanceOf(HpkeOpenException.class);
    assertThatThrownBy(() -> Hpke.open(sealed.enc(), recipient.privateKey(), "other".getBytes(
        StandardCharsets.UTF_8), NONE, sealed.ciphertext())).isInstanceOf(HpkeOpenException.class);
    assertThatThrownBy(() -> Hpke.open(sealed.enc(), recipient.privateKey(), info, new byte[] {1},
        sealed.ciphertext())).isInstanceOf(HpkeOpenException.class);
    assertThatThrownBy(() -> Hpke.open(new byte[31], recipient.privateKey(), info, NONE, sealed.ciphertext()))
        .isInstanceOf(HpkeOpenException.class).hasMessageContaining("32 bytes");
  }

  @Test
  @DisplayName("a point of small order is refused as a recipient key and as an encapsulated key (RFC 9180 §7.1.4)")
  void smallOrderPoints() {
    byte[] zero = new byte[32];
    byte[] one = new byte[32];
    one[0] = 1;
    Hpke.KeyPair recipient = Hpke.generateKeyPair();
    assertThatThrownBy(() -> Hpke.seal(one, NONE, NONE, NONE)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("small order");
    assertThatThrownBy(() -> Hpke.open(zero, recipient.privateKey(), NONE, NONE, new byte[Hpke.TAG_SIZE]))
        .isInstanceOf(HpkeOpenException.class).hasMessageContaining("small order");
  }
}
