package org.shine.server.delivery;

/**
 * A read receipt or tombstone container sent by {@code login}'s session {@code sessionId} (a receipt reaches the
 * reader's other sessions as {@code DmReadByMe}, not this one).
 */
public record SignalCommand(String login, byte[] blob, String sessionId) {
}
