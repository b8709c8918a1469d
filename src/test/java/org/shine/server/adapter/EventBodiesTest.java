package org.shine.server.adapter;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.client.MessageBody;
import org.shine.server.dm.BodyCipher;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.Hpke;
import org.shine.server.dm.KeyFile;
import org.shine.server.util.Json;

/** What the adapter hands on of a verified event's body (PROTOCOL §4 v3 "Hub adapter"). */
class EventBodiesTest {
  private static final long CREATED = 1_774_700_000_123L;
  private static final long NONCE = 42;
  private static final String BASE_KEY = "alice|bob|" + CREATED + "|" + NONCE;
  private final KeyFile alice = KeyFile.generate("alice");
  private final Hpke.KeyPair current = Hpke.generateKeyPair();
  private final Hpke.KeyPair old = Hpke.generateKeyPair();
  private final EventBodies bodies = EventBodies.with(List.of(current, old));

  @Test
  @DisplayName("a body sealed to an older key the user still holds opens: text, bodyB64 and encrypted are added")
  void oldKeyOpens() {
    byte[] plaintext = MessageBody.encode("from last year");
    EventBodies.Opened opened = bodies.open(event(DmKind.INCOMING, BodyCipher.sealBody(plaintext, old.publicKey(),
        BASE_KEY, DmKind.INCOMING, 0)));
    assertThat(opened.rejection()).isNull();
    assertThat(opened.event().at("/payload/text").asText()).isEqualTo("from last year");
    assertThat(opened.event().at("/payload/encrypted").asBoolean()).isTrue();
    assertThat(Base64.getDecoder().decode(opened.event().at("/payload/bodyB64").asText())).isEqualTo(plaintext);
  }

  @Test
  @DisplayName("an outgoing copy sealed to the user's own key opens too")
  void outgoingOpens() {
    EventBodies.Opened opened = bodies.open(event(DmKind.OUTGOING, BodyCipher.sealBody(MessageBody.encode("mine"),
        current.publicKey(), BASE_KEY, DmKind.OUTGOING, 0)));
    assertThat(opened.event().at("/payload/text").asText()).isEqualTo("mine");
  }

  @Test
  @DisplayName("a body sealed for another copy (its info), an altered one and a malformed one are rejected with why")
  void notOpening() {
    byte[] sealedForOutgoing = BodyCipher.sealBody(MessageBody.encode("x"), current.publicKey(), BASE_KEY,
        DmKind.OUTGOING, 0);
    assertThat(bodies.open(event(DmKind.INCOMING, sealedForOutgoing)).rejection())
        .startsWith("the encrypted body does not open with key " + BodyCipher.kid(current.publicKey()));
    ObjectNode altered = (ObjectNode) readTree(BodyCipher.sealBody(MessageBody.encode("x"), current.publicKey(),
        BASE_KEY, DmKind.INCOMING, 0));
    byte[] ct = Base64.getDecoder().decode(altered.get("ctB64").asText());
    ct[0] ^= 1;
    altered.put("ctB64", Base64.getEncoder().encodeToString(ct));
    assertThat(bodies.open(event(DmKind.INCOMING, altered.toString().getBytes(StandardCharsets.UTF_8))).rejection())
        .startsWith("the encrypted body does not open");
    assertThat(bodies.open(event(DmKind.INCOMING, "{\"v\":2,\"alg\":\"rot13\"}".getBytes(StandardCharsets.UTF_8)))
        .rejection()).startsWith("malformed encrypted body");
  }

  @Test
  @DisplayName("a plaintext body is handed on with encrypted false; other events and a key file without encryption"
      + " keys hand events on untouched")
  void untouched() {
    JsonNode plain = event(DmKind.INCOMING, MessageBody.encode("hi"));
    assertThat(bodies.open(plain).event().at("/payload/encrypted").asBoolean(true)).isFalse();
    assertThat(bodies.open(plain).event().at("/payload/text").asText()).isEqualTo("hi");
    JsonNode state = Json.MAPPER.createObjectNode().put("op", "DmDeliveryStateChanged").put("eventKey", "k");
    assertThat(bodies.open(state).event()).isSameAs(state);
    JsonNode sealed = event(DmKind.INCOMING, BodyCipher.sealBody(MessageBody.encode("x"), current.publicKey(),
        BASE_KEY, DmKind.INCOMING, 0));
    EventBodies none = EventBodies.with(List.of());
    assertThat(none.opens()).isFalse();
    assertThat(none.open(sealed).event()).isSameAs(sealed);
    assertThat(plain.at("/payload").has("text")).as("the event given is not changed").isFalse();
  }

  private JsonNode event(DmKind kind, byte[] body) {
    DmContainer container = DmCodec.sign(kind, CREATED, NONCE, 0, "alice", "bob", "", body, alice.privateKey());
    ObjectNode event = Json.MAPPER.createObjectNode().put("op", kind == DmKind.INCOMING ? "IncomingDirectMessage"
        : "OutgoingDirectMessage").put("eventKey", "e");
    event.putObject("payload").put("messageKey", container.messageKey()).put("baseKey", container.baseKey())
        .put("blobB64", Base64.getEncoder().encodeToString(container.bytes()));
    return event;
  }

  private static JsonNode readTree(byte[] json) {
    try {
      return Json.MAPPER.readTree(json);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
