package org.shine.server.delivery;

import java.util.Objects;
import org.shine.server.dm.DmContainer;

/**
 * A pair, or a recipient's copy alone ({@code outgoing} null), parsed and checked as its source's op demands, on its
 * way into {@link PairIntake}. {@code sourceServerLogin}: the server it came from when the gateway trusts that (an
 * authenticated server session), else null; {@code sessionId}: the sender's session that sent it (only
 * {@link IntakeSource#CLIENT}); {@code sourceUrl}: where a synced pair's delivery status is asked (only
 * {@link IntakeSource#SYNC}).
 */
record Arrival(IntakeSource source, DmContainer incoming, DmContainer outgoing, String sourceServerLogin,
    String sessionId, String sourceUrl) {
  Arrival {
    Objects.requireNonNull(source);
    Objects.requireNonNull(incoming);
  }

  static Arrival pair(IntakeSource source, SignedPair pair, String sourceServerLogin, String sessionId,
      String sourceUrl) {
    return new Arrival(source, pair.incoming(), pair.outgoing(), sourceServerLogin, sessionId, sourceUrl);
  }

  static Arrival copy(IntakeSource source, DmContainer incoming, String sourceServerLogin) {
    return new Arrival(source, incoming, null, sourceServerLogin, null, null);
  }

  boolean isPair() {
    return outgoing != null;
  }

  SignedPair pair() {
    return new SignedPair(incoming, outgoing);
  }

  /** Whose copy decides what is stored: a pair's sender, a copy's recipient. */
  String owner() {
    return isPair() ? incoming.from() : incoming.to();
  }

  /** The owner's container: a pair's outgoing copy, or the copy itself. */
  DmContainer primary() {
    return isPair() ? outgoing : incoming;
  }
}
