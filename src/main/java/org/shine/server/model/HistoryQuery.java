package org.shine.server.model;

/** One page of {@code owner}'s conversation with {@code peer}, newest first, strictly before a creation time. */
public record HistoryQuery(String owner, String peer, long beforeCreatedAtMs, int limit) {
}
