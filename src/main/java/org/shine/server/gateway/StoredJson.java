package org.shine.server.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** JSON text this server stored (setting values), read back into a response. */
final class StoredJson {
  private StoredJson() {
  }

  static JsonNode read(ObjectMapper mapper, String text) {
    try {
      return mapper.readTree(text);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("stored JSON does not parse", e);
    }
  }
}
