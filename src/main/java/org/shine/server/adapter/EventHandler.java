package org.shine.server.adapter;

import com.fasterxml.jackson.databind.JsonNode;

/** Application logic for one hub event; must be idempotent (seed 004). Throwing means "retry later". */
@FunctionalInterface
public interface EventHandler {
  void handle(JsonNode event) throws Exception;
}
