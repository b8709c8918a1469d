package org.shine.server.model;

/** One page of {@code owner}'s chat list, newest first, of conversations whose last message is before a time. */
public record ConversationQuery(String owner, long beforeLastAtMs, int limit) {
}
