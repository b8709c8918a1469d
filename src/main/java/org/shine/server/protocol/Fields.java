package org.shine.server.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Base64;
import java.util.Iterator;
import java.util.Set;
import org.shine.server.dm.Logins;

/**
 * Strict reader of one JSON object of a request: unknown fields, missing fields and wrongly typed values each
 * fail with a 400 naming the field.
 */
public final class Fields {
  private final JsonNode node;
  private final String context;

  private Fields(JsonNode node, String context) {
    this.node = node;
    this.context = context;
  }

  /** Checks that {@code node} is an object with no field outside {@code allowed}. */
  public static Fields of(JsonNode node, String context, Set<String> allowed) {
    if (node == null || !node.isObject()) {
      throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD, context + " must be a JSON object");
    }
    for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!allowed.contains(name)) {
        throw ProtocolException.badRequest(ErrorCode.UNKNOWN_FIELD, "unknown field " + context + "." + name);
      }
    }
    return new Fields(node, context);
  }

  public JsonNode required(String name) {
    JsonNode value = node.get(name);
    if (value == null || value.isNull()) {
      throw ProtocolException.badRequest(ErrorCode.MISSING_FIELD, "missing field " + context + "." + name);
    }
    return value;
  }

  public boolean has(String name) {
    JsonNode value = node.get(name);
    return value != null && !value.isNull();
  }

  public String requiredString(String name) {
    JsonNode value = required(name);
    if (!value.isTextual()) {
      throw invalid(name, "must be a string");
    }
    return value.asText();
  }

  public String login(String name) {
    String value = requiredString(name);
    if (!Logins.isValid(value)) {
      throw ProtocolException.badRequest(ErrorCode.INVALID_LOGIN, context + "." + name
          + " must match [a-z0-9_.-]{1,32}");
    }
    return value;
  }

  /** A serverLogin (PROTOCOL §6a v3): {@code [a-z0-9.-]{1,253}}, or a v1/v2 name of the user grammar. */
  public String serverName(String name) {
    String value = requiredString(name);
    if (!Logins.isServerName(value)) {
      throw ProtocolException.badRequest(ErrorCode.INVALID_LOGIN, context + "." + name
          + " must match [a-z0-9.-]{1,253} or [a-z0-9_.-]{1,32}");
    }
    return value;
  }

  public long requiredLong(String name, long min, long max) {
    JsonNode value = required(name);
    if (!value.isIntegralNumber() || !value.canConvertToLong() || value.asLong() < min || value.asLong() > max) {
      throw invalid(name, "must be an integer in " + min + ".." + max);
    }
    return value.asLong();
  }

  public long optionalLong(String name, long min, long max, long fallback) {
    return has(name) ? requiredLong(name, min, max) : fallback;
  }

  /** The length in characters of a string field, to refuse an oversized value before decoding it. */
  public int textLength(String name) {
    return requiredString(name).length();
  }

  /** Decodes a standard (padded) base64 field; {@code exactLength} &lt; 0 accepts any length. */
  public byte[] base64(String name, int exactLength) {
    String text = requiredString(name);
    if (text.length() % 4 != 0) {
      throw ProtocolException.badRequest(ErrorCode.BAD_BASE64, context + "." + name
          + " is not padded standard base64");
    }
    byte[] bytes;
    try {
      bytes = Base64.getDecoder().decode(text);
    } catch (IllegalArgumentException e) {
      throw ProtocolException.badRequest(ErrorCode.BAD_BASE64, context + "." + name + " is not valid base64");
    }
    if (exactLength >= 0 && bytes.length != exactLength) {
      throw invalid(name, "must decode to " + exactLength + " bytes");
    }
    return bytes;
  }

  private ProtocolException invalid(String name, String why) {
    return ProtocolException.badRequest(ErrorCode.INVALID_FIELD, context + "." + name + " " + why);
  }
}
