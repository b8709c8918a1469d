package org.shine.server.gateway;

import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.net.SocketAddress;
import java.util.UUID;
import java.util.function.Consumer;
import org.shine.server.metrics.SessionKind;

/**
 * State of one WebSocket connection; touched only on its gateway instance's event loop. A session is anonymous,
 * a user's (after AuthLogin) or a server's (after ServerAuthLogin), never both. A node may hold tens of thousands
 * of idle sessions, so what one holds while it waits is kept small: its id is made when first needed, its address is
 * read from the socket (issue 18).
 */
final class Session {
  final ServerWebSocket socket;
  /** Unique across the nodes of a deployment, once made ({@link #id()}). */
  private String id;
  String login;
  /** The device key (base64) this user session logged in with (PROTOCOL §4 v3: revoking it closes the session). */
  String deviceKeyB64;
  String serverLogin;
  String challengeLogin;
  String challengeB64;
  String serverChallengeFor;
  String serverChallengeB64;
  /** The pending server challenge was a v3 one (PROTOCOL §6a): the login must bind this server's URL. */
  boolean serverChallengeV3;
  int inFlight;
  MessageConsumer<String> events;
  long lastRequestNanos;
  long lastHeardNanos;
  long lastPingNanos;
  /** When its unsent bytes went over {@code limits.writeQueueBytes} (0: they are not). */
  long congestedSinceNanos;
  int droppedEvents;
  /** The kind this session is counted under in {@code shine_ws_sessions}. */
  SessionKind countedKind = SessionKind.UNAUTHENTICATED;
  /** Writes a server-pushed event to this session (set by the gateway). */
  Consumer<String> pushEvent = frame -> { };
  /** Closes this session because its device key was revoked (set by the gateway). */
  Runnable closeRevoked = () -> { };

  Session(ServerWebSocket socket, long nowNanos) {
    this.socket = socket;
    this.lastRequestNanos = nowNanos;
    this.lastHeardNanos = nowNanos;
    this.lastPingNanos = nowNanos;
  }

  /**
   * What names this session in {@code Addresses.EXCEPT_SESSION_HEADER} (an event for every session of its user but
   * this one), unique across the nodes of a deployment; made by the first request that needs it.
   */
  String id() {
    if (id == null) {
      id = UUID.randomUUID().toString();
    }
    return id;
  }

  /** Whether {@code except} (an event's {@code EXCEPT_SESSION_HEADER}, or null) names this session. */
  boolean isNamedBy(String except) {
    return id != null && id.equals(except);
  }

  /** Logged in as a user. */
  boolean authenticated() {
    return login != null;
  }

  /** Logged in as another server. */
  boolean serverAuthenticated() {
    return serverLogin != null;
  }

  boolean anonymous() {
    return login == null && serverLogin == null;
  }

  /** What it is logged in as now. */
  SessionKind kind() {
    return login != null ? SessionKind.CLIENT : serverLogin != null ? SessionKind.SERVER : SessionKind.UNAUTHENTICATED;
  }

  /** The client's address without its port: what the per-address limits count by. */
  String host() {
    SocketAddress remote = socket.remoteAddress();
    return remote == null ? "" : remote.hostAddress();
  }

  /** The client's address and port ({@code 127.0.0.1:40000}), for logs. */
  String address() {
    SocketAddress remote = socket.remoteAddress();
    return remote == null ? "" : remote.hostAddress() + ":" + remote.port();
  }

  /** Who this session is, for logs. */
  String who() {
    return login != null ? login : serverLogin != null ? "server " + serverLogin : "anonymous " + address();
  }
}
