package org.shine.server.peer;

import com.fasterxml.jackson.databind.JsonNode;

/** The payload of another server's 200 response. */
public record PeerResponse(JsonNode payload) {
}
