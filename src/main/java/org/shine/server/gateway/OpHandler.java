package org.shine.server.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;

/**
 * Serves one op of a session: the request payload in, the response payload out. A rejection is a
 * {@code ProtocolException}, thrown or failed; the gateway turns it into the error frame.
 */
@FunctionalInterface
interface OpHandler {
  Future<JsonNode> handle(Session session, JsonNode payload);
}
