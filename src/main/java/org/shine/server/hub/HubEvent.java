package org.shine.server.hub;

/** One event to queue for {@code login}: its stable key and the JSON body the hub hands out. */
public record HubEvent(String login, String eventKey, String body) {
}
