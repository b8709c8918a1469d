package org.shine.server.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;

/** Checks on setting values that could not be stored as they were sent. */
public final class SettingValues {
  private SettingValues() {
  }

  /**
   * True when a number anywhere in {@code value} is beyond what a double holds (such as {@code 1e999}): it is read as
   * infinity, which JSON cannot write as a number (it would come back as the string {@code "Infinity"}).
   */
  public static boolean containsNonFiniteNumber(JsonNode value) {
    Deque<JsonNode> open = new ArrayDeque<>();
    open.push(value);
    while (!open.isEmpty()) {
      JsonNode node = open.pop();
      if (node.isFloatingPointNumber() && !Double.isFinite(node.doubleValue())) {
        return true;
      }
      node.forEach(open::push);
    }
    return false;
  }

  /** How deep {@code value} nests: 0 for a scalar, 1 for an object or array of scalars, and so on. */
  public static int depth(JsonNode value) {
    int deepest = 0;
    Deque<Map.Entry<JsonNode, Integer>> open = new ArrayDeque<>();
    open.push(Map.entry(value, 0));
    while (!open.isEmpty()) {
      Map.Entry<JsonNode, Integer> next = open.pop();
      if (next.getKey().isContainerNode()) {
        int depth = next.getValue() + 1;
        deepest = Math.max(deepest, depth);
        next.getKey().forEach(child -> open.push(Map.entry(child, depth)));
      }
    }
    return deepest;
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
