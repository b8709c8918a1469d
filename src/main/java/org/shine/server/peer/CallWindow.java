package org.shine.server.peer;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocket;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.Json;
import org.shine.server.util.LogText;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The requests of one peer connection, multiplexed by {@code requestId}: at most {@code window} in flight, at most
 * {@code maxWaiting} more waiting for room (beyond: 503 {@code PEER_BUSY}), each with its own timeout counted from
 * the call; the bytes handed to the socket and not yet written are counted. What the peer's behaviour means for the
 * connection (a timeout, unread bytes, an answer) is told to its {@link Listener}. Confined to the connection's
 * event loop.
 */
final class CallWindow {
  private static final Logger LOG = LoggerFactory.getLogger(CallWindow.class);

  /** What the connection learns from its calls. */
  interface Listener {
    /** A sent call got no answer in time. */
    void timedOut(String op, ObjectNode payload);

    /** The socket holds more than the write bound unsent after this call. */
    void unread(WebSocket ws, String op, ObjectNode payload, long unsentBytes);

    /** A call of {@code op} was answered ({@code probe}: it was the connection's probe). */
    void answered(String op, boolean probe);
  }

  private final Vertx vertx;
  private final String url;
  private final int window;
  private final int maxWaiting;
  private final int writeQueueBytes;
  private final Listener listener;
  private final Map<String, Pending> pending = new HashMap<>();
  private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
  private WebSocket socket;
  private long nextRequestId;
  private long unsentBytes;

  CallWindow(Vertx vertx, String url, CallLimits limits, Listener listener) {
    this.vertx = Objects.requireNonNull(vertx);
    this.url = Objects.requireNonNull(url);
    this.window = limits.window();
    this.maxWaiting = limits.maxWaiting();
    this.writeQueueBytes = limits.writeQueueBytes();
    this.listener = Objects.requireNonNull(listener);
  }

  /** The socket waiting calls are sent on from now on (null: none). */
  void use(WebSocket ws) {
    socket = ws;
  }

  int inFlight() {
    return pending.size();
  }

  int waitingCount() {
    return waiting.size();
  }

  boolean empty() {
    return pending.isEmpty() && waiting.isEmpty();
  }

  /** Sends now when the window has room, else waits for room until {@code deadlineMs} (or fails: PEER_BUSY). */
  Future<JsonNode> call(WebSocket ws, String op, ObjectNode payload, long deadlineMs) {
    if (pending.size() < window) {
      return send(ws, op, payload, Math.max(1, deadlineMs - System.currentTimeMillis()), false);
    }
    if (waiting.size() >= maxWaiting) {
      return Future.failedFuture(new ProtocolException(Status.UNAVAILABLE, ErrorCode.PEER_BUSY,
          maxWaiting + " calls already wait for " + url + "; retry later"));
    }
    Promise<JsonNode> queued = Promise.promise();
    waiting.add(new Waiting(op, payload, deadlineMs, deadlineMs - System.currentTimeMillis(), queued));
    return queued.future();
  }

  /** Sends one request on {@code ws} now, whatever the window (a login, a probe). */
  Future<JsonNode> send(WebSocket ws, String op, ObjectNode payload, long timeoutMs, boolean probe) {
    return send(ws, op, payload, timeoutMs, probe, true);
  }

  /**
   * As above; {@code judged}: whether this call's timeout tells the {@link Listener} that the peer left a call
   * unanswered (it counts towards {@code timeoutsToDown}).
   */
  private Future<JsonNode> send(WebSocket ws, String op, ObjectNode payload, long timeoutMs, boolean probe,
      boolean judged) {
    String requestId = "p-" + (++nextRequestId);
    ObjectNode frame = Json.MAPPER.createObjectNode();
    frame.put("op", op).put("requestId", requestId).set("payload", payload);
    Promise<JsonNode> promise = Promise.promise();
    long timer = vertx.setTimer(timeoutMs, id -> {
      if (pending.remove(requestId) != null) {
        promise.tryFail(timeout(op, timeoutMs));
        if (judged) {
          listener.timedOut(op, payload);
        }
        sendWaiting();
      }
    });
    pending.put(requestId, new Pending(ws, op, promise, timer, probe));
    String text = frame.toString();
    int bytes = text.length();
    unsentBytes += bytes;
    ws.writeTextMessage(text).onComplete(ar -> unsentBytes -= bytes).onFailure(failure -> {
      Pending call = pending.remove(requestId);
      if (call != null) {
        vertx.cancelTimer(call.timer);
        call.promise.tryFail(new ProtocolException(Status.UNAVAILABLE, ErrorCode.PEER_UNAVAILABLE,
            "cannot write to " + url + ": " + failure.getMessage()));
        sendWaiting();
      }
    });
    if (unsentBytes > writeQueueBytes && socket == ws) {
      listener.unread(ws, op, payload, unsentBytes);
    }
    return promise.future();
  }

  /**
   * Sends waiting calls while the window has room; calls whose time ran out while waiting fail. A call that spent
   * more than half of its time waiting here is sent with what is left, but its timeout is not held against the peer:
   * the wait was this server's backlog, not the peer's silence (three such timeouts in a row under load took a
   * healthy sibling for down, and every forward to it then failed at once).
   */
  private void sendWaiting() {
    while (socket != null && pending.size() < window && !waiting.isEmpty()) {
      Waiting next = waiting.poll();
      long left = next.deadlineMs - System.currentTimeMillis();
      if (left <= 0) {
        next.promise.tryFail(timeout(next.op, 0));
      } else {
        send(socket, next.op, next.payload, left, false, 2 * left >= next.timeoutMs).onComplete(next.promise);
      }
    }
  }

  /** A frame from the peer: the answer of a pending call (anything else is dropped). */
  void onFrame(String text) {
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
    listener.answered(call.op, call.probe);
    sendWaiting();
    int status = frame.path("status").asInt();
    if (status == Status.OK) {
      call.promise.tryComplete(frame.path("payload"));
    } else {
      // a peer's words enter here: escaped and cut once, so no log line or answer built from them can be forged
      JsonNode error = frame.path("error");
      call.promise.tryFail(new ProtocolException(status == 0 ? Status.INTERNAL : status,
          LogText.escape(error.path("code").asText(ErrorCode.INTERNAL)),
          LogText.escape(error.path("message").asText(""))));
    }
  }

  /** {@code ws} is gone: its calls in flight fail now, and so do the waiting ones when it was the current socket. */
  void lost(WebSocket ws) {
    List<Pending> lost = new ArrayList<>();
    pending.entrySet().removeIf(entry -> {
      if (entry.getValue().ws == ws) {
        lost.add(entry.getValue());
        return true;
      }
      return false;
    });
    for (Pending call : lost) {
      vertx.cancelTimer(call.timer);
      call.promise.tryFail(connectionLost());
    }
    if (socket == ws) {
      socket = null;
      failWaiting(this::connectionLost);
    }
  }

  /** Every waiting call fails now with {@code why}. */
  void failWaiting(Supplier<ProtocolException> why) {
    List<Waiting> unsent = new ArrayList<>(waiting);
    waiting.clear();
    for (Waiting call : unsent) {
      call.promise.tryFail(why.get());
    }
  }

  private ProtocolException connectionLost() {
    return new ProtocolException(Status.UNAVAILABLE, ErrorCode.PEER_UNAVAILABLE, "connection to " + url
        + " was lost");
  }

  private ProtocolException timeout(String op, long timeoutMs) {
    return new ProtocolException(Status.UNAVAILABLE, ErrorCode.PEER_TIMEOUT,
        op + " to " + url + " timed out" + (timeoutMs > 0 ? " after " + timeoutMs + " ms" : " waiting to be sent"));
  }

  private record Pending(WebSocket ws, String op, Promise<JsonNode> promise, long timer, boolean probe) {
  }

  /** {@code timeoutMs}: the time the call had when it was made. */
  private record Waiting(String op, ObjectNode payload, long deadlineMs, long timeoutMs, Promise<JsonNode> promise) {
  }
}
