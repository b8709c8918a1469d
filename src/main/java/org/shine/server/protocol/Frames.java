package org.shine.server.protocol;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** Renders the envelope frames of PROTOCOL §2: responses, errors and server-pushed events. */
public final class Frames {
  private final ObjectMapper mapper;

  public Frames(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  public ObjectMapper mapper() {
    return mapper;
  }

  public ObjectNode object() {
    return mapper.createObjectNode();
  }

  public String response(String op, JsonNode requestId, JsonNode payload) {
    ObjectNode frame = mapper.createObjectNode();
    frame.put("op", op);
    if (requestId != null) {
      frame.set("requestId", requestId);
    }
    frame.put("status", Status.OK);
    frame.set("payload", payload);
    return write(frame);
  }

  public String error(String op, JsonNode requestId, int status, String code, String message) {
    ObjectNode frame = mapper.createObjectNode();
    if (op != null) {
      frame.put("op", op);
    }
    if (requestId != null) {
      frame.set("requestId", requestId);
    }
    frame.put("status", status);
    frame.putObject("error").put("code", code).put("message", message);
    return write(frame);
  }

  public String event(String op, JsonNode payload) {
    ObjectNode frame = mapper.createObjectNode();
    frame.put("op", op);
    frame.set("payload", payload);
    return write(frame);
  }

  /** An event as the hub hands it out: the event frame plus its stable {@code eventKey}. */
  public String hubEvent(String op, JsonNode payload, String eventKey) {
    ObjectNode frame = mapper.createObjectNode();
    frame.put("op", op);
    frame.put("eventKey", eventKey);
    frame.set("payload", payload);
    return write(frame);
  }

  private String write(ObjectNode frame) {
    try {
      return mapper.writeValueAsString(frame);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot render frame", e);
    }
  }
}
