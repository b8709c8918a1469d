package org.shine.server.delivery;

/** A read receipt or tombstone container sent by {@code login}'s session. */
public record SignalCommand(String login, byte[] blob) {
}
