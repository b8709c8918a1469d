package org.shine.server.model;

/** Identity of one owner's copy of a logical message. */
public record CopyKey(String owner, String baseKey) {
}
