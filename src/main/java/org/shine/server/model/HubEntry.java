package org.shine.server.model;

import java.util.Objects;

/**
 * One hub queue entry for {@code login} (PROTOCOL §10), written in the same statement as the change that causes it:
 * the event's stable key and the JSON body the hub hands out. Built only for users who poll.
 */
public record HubEntry(String login, String eventKey, String body) {
  public HubEntry {
    Objects.requireNonNull(login);
    Objects.requireNonNull(eventKey);
    Objects.requireNonNull(body);
  }
}
