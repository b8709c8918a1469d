package org.shine.server.model;

/**
 * One conversation of an owner's chat list: its last message not deleted (key, creation time, direction and the
 * owner's copy) and how many incoming messages the owner has not sent a read receipt for.
 */
public record ConversationEntry(String peer, String lastMessageKey, long lastAtMs, boolean lastOutgoing,
    byte[] lastBlob, long unread) {
}
