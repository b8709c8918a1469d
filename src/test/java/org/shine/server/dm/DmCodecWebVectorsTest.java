package org.shine.server.dm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.util.Json;

/**
 * The shared vectors of {@code dm/web-codec-vectors.json}: containers signed by this codec, which the web chat's
 * JavaScript codec must reproduce byte for byte ({@code web-tests/codec.test.mjs} runs it in Node on the same file).
 */
class DmCodecWebVectorsTest {

  @Test
  @DisplayName("every shared vector is what DmCodec signs for its fields, parses back to them and verifies")
  void vectorsAreDmCodecOutput() throws IOException, DmFormatException {
    JsonNode vectors;
    try (InputStream in = getClass().getResourceAsStream("/dm/web-codec-vectors.json")) {
      vectors = Json.MAPPER.readTree(in);
    }
    Base64.Decoder base64 = Base64.getDecoder();
    byte[] privateKey = base64.decode(vectors.at("/key/privateKeyB64").asText());
    byte[] publicKey = base64.decode(vectors.at("/key/publicKeyB64").asText());
    assertThat(Ed25519Signer.publicKeyOf(privateKey)).isEqualTo(publicKey);
    assertThat(vectors.get("containers")).hasSizeGreaterThanOrEqualTo(5);
    for (JsonNode vector : vectors.get("containers")) {
      DmKind kind = DmKind.fromCode(vector.get("kind").asInt());
      long createdAtMs = vector.get("createdAtMs").asLong();
      long nonce = Long.parseLong(vector.get("nonce").asText());
      long revision = vector.get("revision").asLong();
      byte[] body = vector.get("body").asText().getBytes(StandardCharsets.UTF_8);
      byte[] expected = base64.decode(vector.get("containerB64").asText());

      DmContainer signed = DmCodec.sign(kind, createdAtMs, nonce, revision, vector.get("from").asText(),
          vector.get("to").asText(), vector.get("ref").asText(), body, privateKey);
      DmContainer parsed = DmCodec.parse(expected);

      assertThat(signed.bytes()).as("vector %s", vector).isEqualTo(expected);
      assertThat(parsed.kind()).isEqualTo(kind);
      assertThat(parsed.nonce()).isEqualTo(nonce);
      assertThat(parsed.revision()).isEqualTo(revision);
      assertThat(parsed.body()).isEqualTo(body);
      assertThat(Ed25519Signer.verify(publicKey, expected, 0, parsed.signedLength(), expected,
          parsed.signedLength())).isTrue();
    }
  }
}
