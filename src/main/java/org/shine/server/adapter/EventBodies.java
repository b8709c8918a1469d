package org.shine.server.adapter;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import org.shine.server.client.MessageBody;
import org.shine.server.dm.BodyCipher;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmFormatException;
import org.shine.server.dm.Hpke;

/**
 * The bodies of a verified event's message copy as the adapter's user reads them (PROTOCOL §4 "v3 encrypted
 * bodies"): an encrypted body is opened with the user's encryption keys (old ones included) and the event handed on
 * with {@code payload.bodyB64} (the v1 body bytes), {@code payload.text} and {@code payload.encrypted}; a plaintext
 * body gets the same fields with {@code encrypted} false. A body that does not open (a key this user does not hold,
 * a malformed or altered envelope) is a rejection with its reason, never handed on. Without encryption keys
 * ({@link #NONE}) every event is handed on as the server has it.
 */
final class EventBodies {
  /** Hands every event on untouched: no keys to open bodies with. */
  static final EventBodies NONE = new EventBodies(null);
  private final BodyCipher.PrivateKeys keys;

  private EventBodies(BodyCipher.PrivateKeys keys) {
    this.keys = keys;
  }

  /** Opens bodies with {@code encryptionKeys}; {@link #NONE} when there are none. */
  static EventBodies with(List<Hpke.KeyPair> encryptionKeys) {
    if (encryptionKeys.isEmpty()) {
      return NONE;
    }
    return new EventBodies(BodyCipher.PrivateKeys.of(encryptionKeys.stream().map(Hpke.KeyPair::privateKey).toList()));
  }

  /** True when bodies are opened here, false when they are handed on as the server has them. */
  boolean opens() {
    return keys != null;
  }

  /**
   * The event to hand on, or the reason it must not be: only message copies ({@code IncomingDirectMessage},
   * {@code OutgoingDirectMessage}) carry a body; {@code event} must have been verified already.
   */
  Opened open(JsonNode event) {
    String op = event.path("op").asText();
    if (keys == null || !op.equals("IncomingDirectMessage") && !op.equals("OutgoingDirectMessage")) {
      return Opened.handOn(event);
    }
    DmContainer container;
    try {
      container = DmCodec.parse(Base64.getDecoder().decode(event.path("payload").path("blobB64").asText("")));
    } catch (DmFormatException | IllegalArgumentException e) {
      return Opened.rejected("unreadable container");
    }
    byte[] body;
    boolean encrypted;
    try {
      body = BodyCipher.openBody(container.body(), keys, container.baseKey(), container.kind(),
          container.revision());
      encrypted = true;
    } catch (BodyCipher.OpenFailure e) {
      if (e.failure() != BodyCipher.Failure.NOT_ENCRYPTED) {
        return Opened.rejected(e.getMessage());
      }
      body = container.body();
      encrypted = false;
    }
    ObjectNode opened = event.deepCopy();
    ((ObjectNode) opened.path("payload")).put("bodyB64", Base64.getEncoder().encodeToString(body))
        .put("text", MessageBody.text(body)).put("encrypted", encrypted);
    return Opened.handOn(opened);
  }

  /** An event to hand on ({@code rejection} null), or why it is rejected. */
  record Opened(JsonNode event, String rejection) {
    static Opened handOn(JsonNode event) {
      return new Opened(Objects.requireNonNull(event), null);
    }

    static Opened rejected(String reason) {
      return new Opened(null, Objects.requireNonNull(reason));
    }
  }
}
