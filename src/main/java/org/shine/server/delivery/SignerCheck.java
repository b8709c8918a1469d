package org.shine.server.delivery;

import java.time.Clock;
import java.util.Objects;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.KeyRing;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolErrors;
import org.shine.server.protocol.ProtocolException;

/**
 * Whether the key that signed a container not stored yet may sign it (PROTOCOL §4 v3, "What a key may sign"): a
 * current key always; a retired key only on a server session of an access server of the author or of the owner
 * (a sibling's sync, a forward, a delivery of something signed before the rotation), or for a first version of a
 * message written before the retirement and still in its retry window ({@code retiredAtMs} + the last schedule point
 * + the clock skew); a revoked key never (400 {@code KEY_REVOKED}). An identical resend never reaches this check: it
 * is answered from the stored bytes.
 */
final class SignerCheck {
  private final Clock clock;
  private final long retryWindowMs;

  /** @param retryWindowMs the last point of the delivery schedule plus the clock skew */
  SignerCheck(Clock clock, long retryWindowMs) {
    this.clock = Objects.requireNonNull(clock);
    this.retryWindowMs = retryWindowMs;
  }

  /**
   * Throws the refusal of {@code container} (one of those a request carries, all judged by their weakest
   * {@code match}); {@code authorsServer}: it came on a server session of an access server of its author or owner.
   */
  void check(KeyRing.Match match, DmContainer container, boolean authorsServer) {
    switch (match.standing()) {
      case CURRENT:
        return;
      case RETIRED:
        if (authorsServer || inRetryWindow(container, match.retiredAtMs())) {
          return;
        }
        throw ProtocolException.badRequest(ErrorCode.BAD_SIGNATURE, "signed by a key " + container.from()
            + " retired at " + match.retiredAtMs() + ": a retired key signs nothing new");
      case REVOKED:
        throw ProtocolException.badRequest(ErrorCode.KEY_REVOKED, "signed by a key " + container.from()
            + " revoked: it signs nothing new");
      default:
        throw ProtocolErrors.badContainerSignature("a container signature", container.from());
    }
  }

  private boolean inRetryWindow(DmContainer container, long retiredAtMs) {
    boolean message = container.kind() == DmKind.INCOMING || container.kind() == DmKind.OUTGOING;
    return message && container.revision() == 0 && container.createdAtMs() < retiredAtMs
        && clock.millis() < retiredAtMs + retryWindowMs;
  }
}
