package org.shine.server.gateway;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.http.ServerWebSocketHandshake;
import io.vertx.core.net.SocketAddress;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;

/**
 * A WebSocket of a loopback client for unit tests: records the texts and pings written to it, its pause and how it
 * was closed; its write queue is full while the test says so, and the test fires its drain and close events.
 */
final class FakeSocket {
  final ServerWebSocket socket;
  final List<String> texts = new ArrayList<>();
  int pings;
  boolean paused;
  boolean queueFull;
  Short closeCode;
  String closeReason;
  private final SocketAddress remote;
  private Handler<Void> drainHandler;
  private Handler<Void> closeHandler;

  FakeSocket(int port) {
    remote = SocketAddress.inetSocketAddress(port, "127.0.0.1");
    socket = proxy(ServerWebSocket.class, (self, method, args) -> answer(method, args));
  }

  /** The peer read everything: Vert.x calls the drain handler. */
  void drain() {
    drainHandler.handle(null);
  }

  /** The connection is gone: Vert.x calls the close handler. */
  void closed() {
    if (closeCode == null) {
      closeCode = 1006;
    }
    closeHandler.handle(null);
  }

  boolean hasDrainHandler() {
    return drainHandler != null;
  }

  @SuppressWarnings("unchecked")
  private Object answer(String method, Object[] args) {
    switch (method) {
      case "remoteAddress":
        return remote;
      case "isClosed":
        return closeCode != null;
      case "close":
        closeCode = (Short) args[0];
        closeReason = (String) args[1];
        return Future.succeededFuture();
      case "writeTextMessage":
        texts.add((String) args[0]);
        return Future.succeededFuture();
      case "writePing":
        pings++;
        return Future.succeededFuture();
      case "writeQueueFull":
        return queueFull;
      case "pause":
        paused = true;
        return socket;
      case "resume":
        paused = false;
        return socket;
      case "drainHandler":
        drainHandler = (Handler<Void>) args[0];
        return socket;
      case "closeHandler":
        closeHandler = (Handler<Void>) args[0];
        return socket;
      case "setWriteQueueMaxSize":
        return socket;
      default:
        throw new UnsupportedOperationException(method);
    }
  }

  /** A loopback HTTP connection from {@code port}: records whether it was closed; the test fires its close event. */
  static final class Connection {
    final HttpConnection connection;
    boolean closed;
    private Handler<Void> closeHandler;

    Connection(int port) {
      SocketAddress remote = SocketAddress.inetSocketAddress(port, "127.0.0.1");
      connection = proxy(HttpConnection.class, (self, method, args) -> switch (method) {
        case "remoteAddress" -> remote;
        case "closeHandler" -> {
          closeHandler = castHandler(args[0]);
          yield self;
        }
        case "close" -> {
          closed = true;
          yield Future.succeededFuture();
        }
        default -> throw new UnsupportedOperationException(method);
      });
    }

    void closedByPeer() {
      closeHandler.handle(null);
    }
  }

  /** A WebSocket upgrade of a loopback client from {@code port} to {@code path}: records how it was answered. */
  static final class Handshake {
    final ServerWebSocketHandshake handshake;
    Integer rejected;
    boolean accepted;

    Handshake(int port, String path) {
      SocketAddress remote = SocketAddress.inetSocketAddress(port, "127.0.0.1");
      handshake = proxy(ServerWebSocketHandshake.class, (self, method, args) -> switch (method) {
        case "remoteAddress" -> remote;
        case "path" -> path;
        case "reject" -> {
          rejected = (Integer) args[0];
          yield Future.succeededFuture();
        }
        case "accept" -> {
          accepted = true;
          yield Future.succeededFuture();
        }
        default -> throw new UnsupportedOperationException(method);
      });
    }
  }

  @SuppressWarnings("unchecked")
  private static Handler<Void> castHandler(Object handler) {
    return (Handler<Void>) handler;
  }

  /** What a fake answers to a call of {@code method} on {@code self}. */
  @FunctionalInterface
  private interface Answer {
    Object answer(Object self, String method, Object[] args);
  }

  /** An implementation of {@code type} whose calls {@code answer} (by method name); identity for equals and hash. */
  private static <T> T proxy(Class<T> type, Answer answer) {
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (self, method, args) ->
        switch (method.getName()) {
          case "equals" -> self == args[0];
          case "hashCode" -> System.identityHashCode(self);
          case "toString" -> type.getSimpleName() + "@" + Integer.toHexString(System.identityHashCode(self));
          default -> answer.answer(self, method.getName(), args == null ? new Object[0] : args);
        }));
  }
}
