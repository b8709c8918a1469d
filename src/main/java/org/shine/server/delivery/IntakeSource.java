package org.shine.server.delivery;

import org.shine.server.dm.DmContainer;
import org.shine.server.model.StoredUser;

/**
 * Where a pair or a recipient's copy comes from on its way into {@link PairIntake}. The path is the same for all;
 * what differs by source is said here: the clock rule, whether the owner must be served here, whether the copy is
 * synced on arrival, how the delivery row is planned, and who hears of the first attempt.
 */
enum IntakeSource {
  /** SendMessagePair on one of the sender's sessions. */
  CLIENT,
  /** ReceiveOutcomingMessage: a pair handed on by the sender's other server (seed §6), or by any caller. */
  SENDER_SIBLING,
  /** ReceiveIncomingMessage: a copy for a recipient served here, from the sender's server. */
  RECIPIENT_DELIVERY,
  /** An item pulled from its owner's sibling (PROTOCOL §8); the puller checked that both serve the owner. */
  SYNC;

  /** A session's container is held to the session's clock rule, what a server hands on to the looser one. */
  Runnable clockRule(ClockSkew skew, DmContainer container) {
    return this == CLIENT ? skew.forSession(container) : skew.forServerOp(container);
  }

  /** A session is logged in here already; any other source must name an owner this server serves. */
  boolean checksOwnerServedHere() {
    return this != CLIENT;
  }

  /**
   * Whether the owner's copy is stored as synced (sync does not carry it back): always for a synced item, for a
   * server op when its trusted source is the owner's sibling, never for a session's pair.
   */
  boolean syncedOnArrival(StoredUser owner, String sourceServerLogin, String here) {
    return switch (this) {
      case CLIENT -> false;
      case SYNC -> true;
      case SENDER_SIBLING, RECIPIENT_DELIVERY -> sourceServerLogin != null && !sourceServerLogin.equals(here)
          && owner.servedBy(sourceServerLogin);
    };
  }

  /**
   * Whether it came on a server session of an access server of its author or of its recipient (a synced item always:
   * the puller's session is the owner's sibling's), where a retired key of the author still signs (PROTOCOL §4 v3).
   */
  boolean fromAuthorsServer(StoredUser author, StoredUser recipient, String sourceServerLogin) {
    return this == SYNC || (this != CLIENT && sourceServerLogin != null
        && (author.servedBy(sourceServerLogin) || recipient.servedBy(sourceServerLogin)));
  }

  /** A synced pair gets its delivery row by its age; any other pair is accepted now with a first attempt. */
  boolean plansByAge() {
    return this == SYNC;
  }

  /**
   * The sender's session waits for the first attempt's state, and the new pair goes on to the sender's sibling
   * after it (seed §4 step 7); for any other source the attempt runs on its own and tells the sender's sessions.
   */
  boolean waitsForFirstAttempt() {
    return this == CLIENT;
  }
}
