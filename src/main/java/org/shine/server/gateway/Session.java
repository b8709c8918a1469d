package org.shine.server.gateway;

import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.net.SocketAddress;
import java.util.UUID;
import java.util.function.Consumer;
import org.shine.server.metrics.SessionKind;

/**
 * State of one WebSocket connection; touched only on its gateway instance's event loop. A session is anonymous,
 * a user's (after AuthLogin) or a server's (after ServerAuthLogin), never both.
 */
final class Session {
  /** Unique across the nodes of a deployment: names this session in {@code Addresses.EXCEPT_SESSION_HEADER}. */
  final String id = UUID.randomUUID().toString();
  final ServerWebSocket socket;
  final String address;
  /** The client's IP address (without the port). */
  final String remoteIp;
  String login;
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

  Session(ServerWebSocket socket, String address, String remoteIp, long nowNanos) {
    this.socket = socket;
    this.address = address;
    this.remoteIp = remoteIp;
    this.lastRequestNanos = nowNanos;
    this.lastHeardNanos = nowNanos;
    this.lastPingNanos = nowNanos;
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

  /** Who this session is, for logs. */
  String who() {
    return login != null ? login : serverLogin != null ? "server " + serverLogin : "anonymous " + address;
  }
}
