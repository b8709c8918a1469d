package org.shine.server.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Map;

/**
 * Checks on parsed JSON that a Java string can hold but Unicode text cannot: a {@code \\uD800}-style escape
 * without its pair. PostgreSQL text cannot hold it either (the driver writes it as {@code ?} or as bytes that are
 * not UTF-8), so such a request is refused before it is read further.
 */
public final class JsonText {
  private JsonText() {
  }

  /** True when a string or a field name anywhere in {@code node} holds an unpaired surrogate. */
  public static boolean hasUnpairedSurrogate(JsonNode node) {
    Deque<JsonNode> open = new ArrayDeque<>();
    open.push(node);
    while (!open.isEmpty()) {
      JsonNode next = open.pop();
      if (next.isTextual() && hasUnpairedSurrogate(next.textValue())) {
        return true;
      }
      if (next.isObject()) {
        for (Iterator<Map.Entry<String, JsonNode>> fields = next.fields(); fields.hasNext(); ) {
          Map.Entry<String, JsonNode> field = fields.next();
          if (hasUnpairedSurrogate(field.getKey())) {
            return true;
          }
          open.push(field.getValue());
        }
      } else if (next.isArray()) {
        next.forEach(open::push);
      }
    }
    return false;
  }

  public static boolean hasUnpairedSurrogate(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return true;
      }
    }
    return false;
  }
}
