package org.shine.server.delivery;

/** {@code ReceiveIncomingMessage}: one copy for a user of this server; {@code sourceServerLogin} may be null. */
public record ReceiveIncomingCommand(byte[] incomingBlob, String sourceServerLogin) {
}
