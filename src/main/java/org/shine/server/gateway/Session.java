package org.shine.server.gateway;

import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.ServerWebSocket;

/** State of one WebSocket connection; touched only on its gateway instance's event loop. */
final class Session {
  final ServerWebSocket socket;
  String login;
  String challengeLogin;
  String challengeB64;
  int inFlight;
  MessageConsumer<String> events;

  Session(ServerWebSocket socket) {
    this.socket = socket;
  }

  boolean authenticated() {
    return login != null;
  }
}
