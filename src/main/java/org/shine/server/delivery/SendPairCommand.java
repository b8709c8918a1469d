package org.shine.server.delivery;

import java.util.Objects;

/** A signed pair from the authenticated {@code login}, as decoded by the gateway. */
public record SendPairCommand(String login, byte[] incomingBlob, byte[] outgoingBlob) {
  public SendPairCommand {
    Objects.requireNonNull(login);
    Objects.requireNonNull(incomingBlob);
    Objects.requireNonNull(outgoingBlob);
  }
}
