package org.shine.server.delivery;

import java.util.Objects;

/**
 * A signed pair from the authenticated {@code login}, as decoded by the gateway; {@code sessionId} names the session
 * that sent it, which its response informs, so the sender's other sessions alone get {@code OutgoingDirectMessage}.
 */
public record SendPairCommand(String login, byte[] incomingBlob, byte[] outgoingBlob, String sessionId) {
  public SendPairCommand {
    Objects.requireNonNull(login);
    Objects.requireNonNull(incomingBlob);
    Objects.requireNonNull(outgoingBlob);
    Objects.requireNonNull(sessionId);
  }
}
