package org.shine.server.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import org.shine.server.util.Json;

/**
 * The body of a message as this project's clients write it (PROTOCOL §3 v2): UTF-8 JSON {@code {"v":1,"text":...}}.
 * Reading also takes the older raw UTF-8 text bodies, so every message ever sent shows as text.
 */
public final class MessageBody {
  private MessageBody() {
  }

  /** The v2 body of a text message. */
  public static byte[] encode(String text) {
    return Json.MAPPER.createObjectNode().put("v", 1).put("text", text).toString().getBytes(StandardCharsets.UTF_8);
  }

  /** The text of a body: the {@code text} of a v2 JSON body, else the body itself as UTF-8 (an older message). */
  public static String text(byte[] body) {
    String raw = new String(body, StandardCharsets.UTF_8);
    if (raw.startsWith("{")) {
      try {
        JsonNode node = Json.MAPPER.readTree(raw);
        if (node.isObject() && node.path("v").isInt() && node.path("text").isTextual()) {
          return node.get("text").asText();
        }
      } catch (JsonProcessingException e) {
        return raw;
      }
    }
    return raw;
  }
}
