package org.shine.server.delivery;

/** {@code ReceiveOutcomingMessage}: a sender's pair; {@code sourceServerLogin} may be null. */
public record ReceiveOutgoingCommand(byte[] incomingBlob, byte[] outgoingBlob, String sourceServerLogin) {
}
