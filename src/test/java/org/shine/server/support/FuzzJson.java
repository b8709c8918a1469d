package org.shine.server.support;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BigIntegerNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;
import org.shine.server.util.Json;

/**
 * Generators of hostile JSON for the fuzz properties: random mutations of a valid request (a field removed, added,
 * renamed, its value's type swapped or replaced by an odd value), huge and NaN-like numbers, deep nesting and odd
 * Unicode (lone surrogates escaped in the text, NUL, RTL marks, combining characters, very long strings).
 * Values a tree cannot hold (raw number tokens, nesting deeper than Jackson writes) travel as placeholders that
 * {@link #text(JsonNode)} replaces in the rendered text.
 */
public final class FuzzJson {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final String RAW = "\u0001raw:";
  /** How a placeholder starts in rendered text (Jackson escapes the control character). */
  private static final String RAW_TEXT = "\"\\u0001raw:";
  private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);

  private FuzzJson() {
  }

  /** One change to a JSON tree; {@code target} picks the node (modulo the number of candidates). */
  public record Mutation(Kind kind, int target, JsonNode value, String name) {
    /** What the change does. */
    public enum Kind { REPLACE, SWAP_TYPE, REMOVE, ADD_FIELD, RENAME, WRAP_IN_ARRAY }
  }

  /** One to three mutations. */
  public static Arbitrary<List<Mutation>> mutations() {
    return mutation().list().ofMinSize(1).ofMaxSize(3);
  }

  public static Arbitrary<Mutation> mutation() {
    return Combinators.combine(Arbitraries.of(Mutation.Kind.class), Arbitraries.integers().between(0, 1_000),
        oddValue(), fieldName()).as(Mutation::new);
  }

  /** Applies {@code mutations} to a copy of {@code valid}; the copy is what a hostile client would send. */
  public static JsonNode mutate(JsonNode valid, List<Mutation> mutations) {
    JsonNode root = valid.deepCopy();
    for (Mutation mutation : mutations) {
      root = apply(root, mutation);
    }
    return root;
  }

  private static JsonNode apply(JsonNode root, Mutation mutation) {
    List<Slot> slots = new ArrayList<>();
    collect(root, null, slots);
    Slot slot = slots.get(mutation.target() % slots.size());
    JsonNode current = slot.get();
    switch (mutation.kind()) {
      case REPLACE -> slot.set(mutation.value());
      case SWAP_TYPE -> slot.set(swapType(current, mutation.target()));
      case WRAP_IN_ARRAY -> slot.set(NODES.arrayNode().add(current));
      case REMOVE -> slot.remove();
      case ADD_FIELD -> {
        ObjectNode object = current.isObject() ? (ObjectNode) current : slot.parentObject();
        if (object != null) {
          object.set(mutation.name(), mutation.value());
        }
      }
      case RENAME -> slot.rename(mutation.name());
      default -> throw new IllegalStateException();
    }
    return slots.get(0).get();
  }

  /** The same content as another JSON type: string ↔ number ↔ object ↔ array ↔ null ↔ boolean. */
  static JsonNode swapType(JsonNode node, int pick) {
    String text = node.isValueNode() ? node.asText() : node.toString();
    return switch (pick % 6) {
      case 0 -> node.isTextual() ? NODES.numberNode(text.length()) : NODES.textNode(text);
      case 1 -> node.isNumber() ? NODES.textNode(text) : NODES.numberNode(new BigInteger("9".repeat(25)));
      case 2 -> NODES.objectNode().set("value", node);
      case 3 -> NODES.arrayNode().add(node);
      case 4 -> NODES.nullNode();
      default -> NODES.booleanNode(pick % 2 == 0);
    };
  }

  /** Strings a strict reader must survive; {@code maxLength} bounds the long ones. */
  public static Arbitrary<String> oddString() {
    return Arbitraries.frequencyOf(
        Tuple.of(3, Arbitraries.of("", " ", "\u0000", "a\u0000b", "\uD800", "\uDFFF", "x\uDBFF",
            "\uDC00\uD800", "\u202Ealice", "\u200F\u200E", "e\u0301\u0301\u0301", "\uFEFF", "\uFFFF", "\uFFFE",
            "\uD83D\uDE00", "\u0000\u0000", "\\", "\"", "|", "alice|bob", "ALICE", "alice ", " alice", "аlice",
            "null", "true", "NaN", "Infinity", "-Infinity", "-0", "1e999", "0x10", "9223372036854775808",
            "-9223372036854775809", "AAAA", "AAA=", "====", "%00", "ws://127.0.0.1:1/ws\u0000",
            "ws://127.0.0.1:1/\uD800", "\r\n", "\t", "\u0085", "\u2028\u2029")),
        Tuple.of(3, Arbitraries.strings().all().ofMaxLength(40)),
        Tuple.of(2, Arbitraries.strings().withChars("\u0000\uD800\uDC00\u202E\u0301\uFEFFa|=/+")
            .ofMaxLength(64)),
        Tuple.of(1, Combinators.combine(Arbitraries.of("a", "\u00e9", "\u0301", "\uD83D\uDE00", "A="),
            Arbitraries.integers().between(1_000, 80_000)).as(String::repeat)));
  }

  /** Any JSON value a field may be swapped for: odd strings, huge numbers, containers, deep nesting. */
  public static Arbitrary<JsonNode> oddValue() {
    return Arbitraries.frequencyOf(
        Tuple.of(4, oddString().map(text -> (JsonNode) TextNode.valueOf(text))),
        Tuple.of(3, hugeNumber()),
        Tuple.of(1, Arbitraries.<JsonNode>of(NODES.nullNode(), NODES.booleanNode(true), NODES.booleanNode(false),
            NODES.objectNode(), NODES.arrayNode(), NODES.numberNode(0), NODES.numberNode(-1), NODES.numberNode(0.5))),
        Tuple.of(1, Combinators.combine(Arbitraries.integers().between(2, 3_000), Arbitraries.of(true, false))
            .as((depth, array) -> raw(deep(depth, array)))),
        Tuple.of(1, Arbitraries.of("1e999", "-1e999", "1E2", "1.0", "-0", "-0.0", "00", "1e-999",
            "123456789012345678901234567890123456789", "NaN", "Infinity", "-", "0x1F", "+1", ".5")
            .map(FuzzJson::raw)));
  }

  /** Integers at and beyond the edges of int, long and u32, and BigIntegers far past them. */
  public static Arbitrary<JsonNode> hugeNumber() {
    return Arbitraries.frequencyOf(
        Tuple.of(2, Arbitraries.of(Long.MAX_VALUE, Long.MIN_VALUE, (long) Integer.MAX_VALUE, (long) Integer.MIN_VALUE,
            0xFFFF_FFFFL, 0x1_0000_0000L, -1L, 0L, 1L, 200L, 201L, 1000L, 1001L, 10_001L)
            .map(n -> (JsonNode) NODES.numberNode(n))),
        Tuple.of(2, Arbitraries.bigIntegers().between(LONG_MAX.negate().pow(3), LONG_MAX.pow(3))
            .map(n -> (JsonNode) BigIntegerNode.valueOf(n))),
        Tuple.of(1, Arbitraries.doubles().map(n -> (JsonNode) NODES.numberNode(n))),
        Tuple.of(1, Arbitraries.longs().map(n -> (JsonNode) NODES.numberNode(n))));
  }

  public static Arbitrary<String> fieldName() {
    return Arbitraries.frequencyOf(
        Tuple.of(3, Arbitraries.of("op", "requestId", "payload", "login", "card", "version", "limit",
            "peer", "key", "value", "__proto__", "constructor", "", "\u0000", "\uD800", "incomingBlobB64 ")),
        Tuple.of(1, oddString()));
  }

  /** A raw JSON token (or non-JSON text) put where a value goes. */
  public static JsonNode raw(String text) {
    return TextNode.valueOf(RAW + text);
  }

  /** JSON text of {@code node}: lone surrogates written as {@code \\uXXXX} escapes, placeholders replaced. */
  public static String text(JsonNode node) {
    String json;
    try {
      json = escapeLoneSurrogates(Json.MAPPER.writeValueAsString(node));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    StringBuilder out = new StringBuilder(json.length());
    int from = 0;
    for (int start = json.indexOf(RAW_TEXT); start >= 0; start = json.indexOf(RAW_TEXT, from)) {
      out.append(json, from, start);
      int end = start + RAW_TEXT.length();
      while (json.charAt(end) != '"') {
        end += json.charAt(end) == '\\' ? 2 : 1;
      }
      out.append(unescape(json.substring(start + RAW_TEXT.length(), end)));
      from = end + 1;
    }
    return out.append(json, from, json.length()).toString();
  }

  /** Nested arrays ({@code [[[...]]]}) or objects ({@code {"a":{"a":...}}}) {@code depth} levels deep. */
  public static String deep(int depth, boolean arrays) {
    return arrays ? "[".repeat(depth) + "]".repeat(depth) : "{\"a\":".repeat(depth) + "1" + "}".repeat(depth);
  }

  private static String unescape(String rawToken) {
    return rawToken.replace("\\\"", "\"").replace("\\\\", "\\");
  }

  private static String escapeLoneSurrogates(String json) {
    StringBuilder out = new StringBuilder(json.length());
    for (int i = 0; i < json.length(); i++) {
      char c = json.charAt(i);
      boolean paired = Character.isHighSurrogate(c) && i + 1 < json.length()
          && Character.isLowSurrogate(json.charAt(i + 1));
      if (paired) {
        out.append(c).append(json.charAt(++i));
      } else if (Character.isSurrogate(c)) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }

  private static void collect(JsonNode node, Slot slot, List<Slot> slots) {
    Slot here = slot == null ? Slot.root(node) : slot;
    slots.add(here);
    if (node instanceof ObjectNode object) {
      List<String> names = new ArrayList<>();
      object.fieldNames().forEachRemaining(names::add);
      for (String name : names) {
        collect(object.get(name), Slot.field(object, name), slots);
      }
    } else if (node instanceof ArrayNode array) {
      for (int i = 0; i < array.size(); i++) {
        collect(array.get(i), Slot.element(array, i), slots);
      }
    }
  }

  /** Where a node sits: the root, a field of an object or an element of an array. */
  private static final class Slot {
    private final ObjectNode object;
    private final ArrayNode array;
    private final String name;
    private final int index;
    private final Holder holder;

    private Slot(ObjectNode object, ArrayNode array, String name, int index, Holder holder) {
      this.object = object;
      this.array = array;
      this.name = name;
      this.index = index;
      this.holder = holder;
    }

    static Slot root(JsonNode node) {
      return new Slot(null, null, null, -1, new Holder(node));
    }

    static Slot field(ObjectNode object, String name) {
      return new Slot(object, null, name, -1, null);
    }

    static Slot element(ArrayNode array, int index) {
      return new Slot(null, array, null, index, null);
    }

    JsonNode get() {
      if (holder != null) {
        return holder.get();
      }
      return object != null ? object.get(name) : array.get(index);
    }

    void set(JsonNode value) {
      if (holder != null) {
        holder.value = value;
      } else if (object != null) {
        object.set(name, value);
      } else {
        array.set(index, value);
      }
    }

    void remove() {
      if (holder != null) {
        holder.value = NODES.objectNode();
      } else if (object != null) {
        object.remove(name);
      } else {
        array.remove(index);
      }
    }

    void rename(String newName) {
      if (object != null) {
        JsonNode value = object.remove(name);
        object.set(newName, value);
      }
    }

    ObjectNode parentObject() {
      return object;
    }
  }

  /** The root's current value (a mutation may replace it). */
  private static final class Holder {
    private JsonNode value;

    Holder(JsonNode value) {
      this.value = value;
    }

    JsonNode get() {
      return value;
    }
  }
}
