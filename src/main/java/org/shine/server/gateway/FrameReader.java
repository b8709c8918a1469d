package org.shine.server.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Objects;
import java.util.Set;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.JsonText;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;

/**
 * Reads one text frame of a session into a request (PROTOCOL §2): valid JSON, Unicode text (no unpaired surrogate
 * escape), at most {@code limits.maxFrameBytes}, and an envelope of {@code op} (a string), {@code requestId} (a
 * string or a number) and an optional object {@code payload}, nothing else. A frame that fails is a
 * {@link BadFrame}: the error it earns, with the op and requestId that its answer may echo.
 */
final class FrameReader {
  private static final Set<String> ENVELOPE_FIELDS = Set.of("op", "requestId", "payload");
  private final ObjectMapper mapper;
  private final int maxFrameBytes;

  FrameReader(ObjectMapper mapper, int maxFrameBytes) {
    this.mapper = Objects.requireNonNull(mapper);
    this.maxFrameBytes = maxFrameBytes;
  }

  /** A request as its envelope carried it; {@code payload} is an empty object when the frame had none. */
  record Request(String op, JsonNode requestId, JsonNode payload) {
  }

  /** A frame that is not a request: the error to answer, echoing {@code op} and {@code requestId} when not null. */
  static final class BadFrame extends ProtocolException {
    private final String op;
    private final JsonNode requestId;

    BadFrame(String op, JsonNode requestId, ProtocolException error) {
      super(error.status(), error.code(), error.getMessage());
      this.op = op;
      this.requestId = requestId;
    }

    String op() {
      return op;
    }

    JsonNode requestId() {
      return requestId;
    }
  }

  /** The request {@code text} holds; throws {@link BadFrame} when it holds none. */
  Request read(String text) {
    JsonNode frame;
    try {
      frame = mapper.readTree(text);
    } catch (JsonProcessingException e) {
      throw new BadFrame(null, null, tooLarge(text) ? frameTooLarge()
          : ProtocolException.badRequest(ErrorCode.BAD_JSON, "frame is not valid JSON: " + e.getOriginalMessage()));
    }
    String op = frame != null && frame.path("op").isTextual() ? frame.get("op").asText() : null;
    JsonNode requestId = frame != null && (frame.path("requestId").isTextual() || frame.path("requestId").isNumber())
        ? frame.get("requestId") : null;
    if (frame != null && JsonText.hasUnpairedSurrogate(frame)) {
      // an echoed op or requestId must be text the answer can carry
      throw new BadFrame(op == null || JsonText.hasUnpairedSurrogate(op) ? null : op,
          requestId == null || JsonText.hasUnpairedSurrogate(requestId) ? null : requestId,
          tooLarge(text) ? frameTooLarge() : ProtocolException.badRequest(ErrorCode.BAD_JSON,
              "a string in the frame holds an unpaired surrogate escape (\\uD800-\\uDFFF): not Unicode text"));
    }
    ProtocolException invalid = tooLarge(text) ? frameTooLarge() : checkEnvelope(frame, op, requestId);
    if (invalid != null) {
      throw new BadFrame(op, requestId, invalid);
    }
    return new Request(op, requestId, frame.has("payload") ? frame.get("payload")
        : JsonNodeFactory.instance.objectNode());
  }

  /** What a binary frame earns: the protocol speaks JSON text frames only. */
  static BadFrame binary() {
    return new BadFrame(null, null, ProtocolException.badRequest(ErrorCode.BAD_ENVELOPE,
        "binary frames are not supported; send JSON text frames"));
  }

  private static ProtocolException checkEnvelope(JsonNode frame, String op, JsonNode requestId) {
    if (frame == null || !frame.isObject()) {
      return ProtocolException.badRequest(ErrorCode.BAD_ENVELOPE, "a frame must be a JSON object");
    }
    for (Iterator<String> names = frame.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!ENVELOPE_FIELDS.contains(name)) {
        return ProtocolException.badRequest(ErrorCode.UNKNOWN_FIELD, "unknown envelope field " + name);
      }
    }
    if (op == null) {
      return ProtocolException.badRequest(ErrorCode.BAD_ENVELOPE, "op must be a string");
    }
    if (requestId == null) {
      return ProtocolException.badRequest(ErrorCode.BAD_ENVELOPE, "requestId must be a string or a number");
    }
    if (frame.has("payload") && !frame.get("payload").isObject()) {
      return ProtocolException.badRequest(ErrorCode.BAD_ENVELOPE, "payload must be a JSON object");
    }
    return null;
  }

  /** Over the limit in UTF-8 bytes; the count of bytes is taken only when the length in chars cannot decide. */
  private boolean tooLarge(String text) {
    return text.length() > maxFrameBytes || (text.length() * 3L > maxFrameBytes
        && text.getBytes(StandardCharsets.UTF_8).length > maxFrameBytes);
  }

  private ProtocolException frameTooLarge() {
    return new ProtocolException(Status.TOO_LARGE, ErrorCode.FRAME_TOO_LARGE,
        "frame exceeds " + maxFrameBytes + " bytes");
  }
}
