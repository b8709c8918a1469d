package org.shine.server.peer;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketConnectOptions;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.Json;
import org.shine.server.util.WsUrls;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One persistent WebSocket connection to another server, multiplexing requests by {@code requestId}. A call
 * while disconnected connects at once (one connect at a time, shared by every waiting call); a lost connection
 * fails its in-flight calls immediately. A persistent connection (configured peers) also reconnects by itself
 * with capped exponential backoff and jitter. Confined to one event loop.
 */
final class PeerConnection {
  private static final Logger LOG = LoggerFactory.getLogger(PeerConnection.class);
  private static final long BACKOFF_START_MS = 250;
  private static final long BACKOFF_MAX_MS = 30_000;

  private final Vertx vertx;
  private final WebSocketClient client;
  private final String url;
  private final WebSocketConnectOptions connectOptions;
  private final boolean persistent;
  private final Consumer<String> onConnected;
  private final Map<String, Pending> pending = new HashMap<>();
  private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
  private final int window;
  private WebSocket socket;
  private Future<WebSocket> connecting;
  private long nextRequestId;
  private long backoffMs = BACKOFF_START_MS;
  private long reconnectTimer = -1;
  private boolean closed;

  PeerConnection(Vertx vertx, WebSocketClient client, String url, long connectTimeoutMs, int window,
      boolean persistent, Consumer<String> onConnected) {
    this.vertx = vertx;
    this.window = window;
    this.client = client;
    this.url = url;
    this.persistent = persistent;
    this.onConnected = onConnected;
    this.connectOptions = WsUrls.connectOptions(url)
        .setConnectTimeout(connectTimeoutMs)
        .setTimeout(connectTimeoutMs);
    if (persistent) {
      ensureConnected();
    }
  }

  boolean connected() {
    return socket != null;
  }

  /**
   * Sends one request; fails with a {@link ProtocolException} carrying the peer's status, or 503. At most
   * {@code window} requests are in flight on the connection (a server limits requests per connection); the rest
   * wait here, and the timeout counts from the call.
   */
  Future<JsonNode> call(String op, ObjectNode payload, long timeoutMs) {
    long deadline = System.currentTimeMillis() + timeoutMs;
    return ensureConnected().compose(ws -> {
      if (pending.size() < window) {
        return send(ws, op, payload, Math.max(1, deadline - System.currentTimeMillis()));
      }
      Promise<JsonNode> queued = Promise.promise();
      waiting.add(new Waiting(op, payload, deadline, queued));
      return queued.future();
    });
  }

  /** Sends waiting calls while the window has room; calls whose time ran out while waiting fail. */
  private void sendWaiting() {
    while (socket != null && pending.size() < window && !waiting.isEmpty()) {
      Waiting next = waiting.poll();
      long left = next.deadline - System.currentTimeMillis();
      if (left <= 0) {
        next.promise.tryFail(timeout(next.op, 0));
      } else {
        send(socket, next.op, next.payload, left).onComplete(next.promise);
      }
    }
  }

  private ProtocolException timeout(String op, long timeoutMs) {
    return new ProtocolException(Status.UNAVAILABLE, ErrorCode.PEER_TIMEOUT,
        op + " to " + url + " timed out" + (timeoutMs > 0 ? " after " + timeoutMs + " ms" : " waiting to be sent"));
  }

  void close() {
    closed = true;
    if (reconnectTimer >= 0) {
      vertx.cancelTimer(reconnectTimer);
    }
    if (socket != null) {
      socket.close();
    }
  }

  private Future<WebSocket> ensureConnected() {
    if (socket != null) {
      return Future.succeededFuture(socket);
    }
    if (connecting != null) {
      return connecting;
    }
    connecting = client.connect(connectOptions)
        .onSuccess(this::attach)
        .recover(failure -> {
          LOG.debug("peer unreachable [url: {}]: {}", url, failure.toString());
          scheduleReconnect();
          return Future.failedFuture(new ProtocolException(Status.UNAVAILABLE, ErrorCode.PEER_UNAVAILABLE,
              "peer " + url + " is unreachable: " + failure.getMessage()));
        })
        .onComplete(ar -> connecting = null);
    return connecting;
  }

  private void attach(WebSocket ws) {
    socket = ws;
    backoffMs = BACKOFF_START_MS;
    ws.textMessageHandler(this::onFrame);
    ws.closeHandler(v -> detach(ws));
    ws.exceptionHandler(failure -> LOG.debug("peer socket error [url: {}]: {}", url, failure.toString()));
    LOG.info("peer connected [url: {}]", url);
    onConnected.accept(url);
  }

  private void detach(WebSocket ws) {
    if (socket != ws) {
      return;
    }
    socket = null;
    LOG.info("peer connection lost [url: {}]", url);
    List<Pending> lost = new ArrayList<>(pending.values());
    pending.clear();
    for (Pending call : lost) {
      vertx.cancelTimer(call.timer);
      call.promise.tryFail(new ProtocolException(Status.UNAVAILABLE, ErrorCode.PEER_UNAVAILABLE,
          "connection to " + url + " was lost"));
    }
    List<Waiting> unsent = new ArrayList<>(waiting);
    waiting.clear();
    for (Waiting call : unsent) {
      call.promise.tryFail(new ProtocolException(Status.UNAVAILABLE, ErrorCode.PEER_UNAVAILABLE,
          "connection to " + url + " was lost"));
    }
    scheduleReconnect();
  }

  private void scheduleReconnect() {
    if (!persistent || closed || reconnectTimer >= 0) {
      return;
    }
    long delay = backoffMs / 2 + ThreadLocalRandom.current().nextLong(backoffMs / 2 + 1);
    backoffMs = Math.min(BACKOFF_MAX_MS, backoffMs * 2);
    reconnectTimer = vertx.setTimer(delay, id -> {
      reconnectTimer = -1;
      if (!closed) {
        ensureConnected();
      }
    });
  }

  private Future<JsonNode> send(WebSocket ws, String op, ObjectNode payload, long timeoutMs) {
    String requestId = "p-" + (++nextRequestId);
    ObjectNode frame = Json.MAPPER.createObjectNode();
    frame.put("op", op).put("requestId", requestId).set("payload", payload);
    Promise<JsonNode> promise = Promise.promise();
    long timer = vertx.setTimer(timeoutMs, id -> {
      if (pending.remove(requestId) != null) {
        promise.tryFail(timeout(op, timeoutMs));
        sendWaiting();
      }
    });
    pending.put(requestId, new Pending(promise, timer));
    ws.writeTextMessage(frame.toString()).onFailure(failure -> {
      Pending call = pending.remove(requestId);
      if (call != null) {
        vertx.cancelTimer(call.timer);
        call.promise.tryFail(new ProtocolException(Status.UNAVAILABLE, ErrorCode.PEER_UNAVAILABLE,
            "cannot write to " + url + ": " + failure.getMessage()));
        sendWaiting();
      }
    });
    return promise.future();
  }

  private void onFrame(String text) {
    JsonNode frame;
    try {
      frame = Json.MAPPER.readTree(text);
    } catch (JsonProcessingException e) {
      LOG.debug("unreadable frame from peer [url: {}]", url);
      return;
    }
    JsonNode requestId = frame == null ? null : frame.get("requestId");
    Pending call = requestId == null ? null : pending.remove(requestId.asText());
    if (call == null) {
      return;
    }
    vertx.cancelTimer(call.timer);
    sendWaiting();
    int status = frame.path("status").asInt();
    if (status == Status.OK) {
      call.promise.tryComplete(frame.path("payload"));
    } else {
      JsonNode error = frame.path("error");
      call.promise.tryFail(new ProtocolException(status == 0 ? Status.INTERNAL : status,
          error.path("code").asText(ErrorCode.INTERNAL), error.path("message").asText("")));
    }
  }

  private record Pending(Promise<JsonNode> promise, long timer) {
  }

  private record Waiting(String op, ObjectNode payload, long deadline, Promise<JsonNode> promise) {
  }
}
