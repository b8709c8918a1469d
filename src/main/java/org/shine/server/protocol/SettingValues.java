package org.shine.server.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;

/** Checks on setting keys and values that PostgreSQL text cannot hold. */
public final class SettingValues {
  private SettingValues() {
  }

  /** True when a string or a field name anywhere in {@code value} holds U+0000 (no PostgreSQL text may). */
  public static boolean containsNul(JsonNode value) {
    Deque<JsonNode> open = new ArrayDeque<>();
    open.push(value);
    while (!open.isEmpty()) {
      JsonNode node = open.pop();
      if (node.isTextual() && node.textValue().indexOf('\0') >= 0) {
        return true;
      }
      if (node.isObject()) {
        for (Map.Entry<String, JsonNode> field : node.properties()) {
          if (field.getKey().indexOf('\0') >= 0) {
            return true;
          }
          open.push(field.getValue());
        }
      } else if (node.isArray()) {
        node.forEach(open::push);
      }
    }
    return false;
  }
}
