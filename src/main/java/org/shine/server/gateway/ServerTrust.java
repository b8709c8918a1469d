package org.shine.server.gateway;

import java.util.Objects;
import org.shine.server.config.AppConfig;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Fields;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;

/**
 * Which server a session's call speaks for (PROTOCOL §6a): the server of an authenticated server session, or a
 * configured {@code "protocol": "v1"} peer named on an anonymous session from one of that peer's addresses.
 */
final class ServerTrust {
  private final AppConfig config;
  private final LegacyPeerAddresses legacyAddresses;

  ServerTrust(AppConfig config, LegacyPeerAddresses legacyAddresses) {
    this.config = Objects.requireNonNull(config);
    this.legacyAddresses = Objects.requireNonNull(legacyAddresses);
  }

  /**
   * The sign of a server call that this server trusts (PROTOCOL §6a): the session's own server when
   * {@code sourceServerLogin} names it (another name is 403), or a configured legacy peer named on an anonymous
   * session; otherwise null, and the call is processed like a client's (recorded unsynced).
   */
  String trustedSource(Session session, Fields fields) {
    String claimed = fields.has("sourceServerLogin") ? fields.serverName("sourceServerLogin") : null;
    if (claimed == null) {
      return null;
    }
    if (session.serverAuthenticated()) {
      requireOwnServer(session, claimed);
      return claimed;
    }
    return session.anonymous() && legacyPeer(session, claimed) ? claimed : null;
  }

  /** The sync ops serve only a server session (or a configured v1 peer at its address); the puller is that server. */
  String syncPuller(Session session, String op, String claimed) {
    if (session.serverAuthenticated()) {
      requireOwnServer(session, claimed);
      return claimed;
    }
    if (session.anonymous() && legacyPeer(session, claimed)) {
      return claimed;
    }
    throw new ProtocolException(Status.UNAUTHORIZED, ErrorCode.NOT_AUTHENTICATED,
        op + " needs an authenticated server session (ServerAuthChallenge, then ServerAuthLogin)");
  }

  private static void requireOwnServer(Session session, String claimed) {
    if (!claimed.equals(session.serverLogin)) {
      throw new ProtocolException(Status.FORBIDDEN, ErrorCode.SOURCE_MISMATCH, "sourceServerLogin " + claimed
          + " is not the server of this session (" + session.serverLogin + ")");
    }
  }

  private boolean legacyPeer(Session session, String serverLogin) {
    return config.peer(serverLogin).map(p -> p.protocol() == AppConfig.PeerProtocol.V1).orElse(false)
        && legacyAddresses.of(serverLogin, session.host());
  }
}
