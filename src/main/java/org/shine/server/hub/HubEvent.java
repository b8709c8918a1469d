package org.shine.server.hub;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One event for {@code login}, handed to the hub: its stable key, op and payload. The hub builds the JSON body it
 * hands out only for a user who polls, so the events of everyone else cost no encoding. The payload is never
 * changed once sent (several threads may read it).
 */
public record HubEvent(String login, String eventKey, String op, JsonNode payload) {
}
