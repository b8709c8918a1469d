package org.shine.server.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * The requests of one {@link ShineClient} connection that wait for their answer, by {@code requestId}: each fails
 * with status 0 {@link ShineClient#TIMEOUT} when its timeout passes, all fail with {@link
 * ShineClient#CONNECTION_CLOSED} when the connection closes (and so does any request opened after that), and a late
 * answer is ignored.
 */
final class PendingRequests {
  private final Vertx vertx;
  private final Map<String, Promise<JsonNode>> pending = new ConcurrentHashMap<>();
  private final AtomicLong nextId = new AtomicLong();
  /** Why the connection closed, once it has: a request opened after that fails at once with it. */
  private volatile String closedWhy;

  PendingRequests(Vertx vertx) {
    this.vertx = Objects.requireNonNull(vertx);
  }

  /**
   * The answer to a new request {@code op}: {@code write} sends its frame with the {@code requestId} given; a failed
   * write fails the request, and so does no answer within {@code timeoutMs} (0: wait as long as the connection lives).
   */
  Future<JsonNode> open(String op, long timeoutMs, Function<String, Future<Void>> write) {
    String requestId = "c-" + nextId.incrementAndGet();
    Promise<JsonNode> promise = Promise.promise();
    pending.put(requestId, promise);
    // put before the flag is read, the flag set before failAll reads the map: a request that races the close fails
    String closed = closedWhy;
    if (closed != null) {
      if (pending.remove(requestId) != null) {
        promise.tryFail(new ShineClientException(0, ShineClient.CONNECTION_CLOSED, closed));
      }
      return promise.future();
    }
    write.apply(requestId).onFailure(failure -> {
      if (pending.remove(requestId) != null) {
        promise.tryFail(failure);
      }
    });
    if (timeoutMs > 0) {
      long timer = vertx.setTimer(timeoutMs, id -> {
        if (pending.remove(requestId) != null) {
          promise.tryFail(new ShineClientException(0, ShineClient.TIMEOUT, op + " got no answer within " + timeoutMs
              + " ms"));
        }
      });
      promise.future().onComplete(ar -> vertx.cancelTimer(timer));
    }
    return promise.future();
  }

  /** Completes the request {@code requestId} with the response {@code frame}: its payload on 200, else its error. */
  void answer(String requestId, JsonNode frame) {
    Promise<JsonNode> promise = pending.remove(requestId);
    if (promise == null) {
      return;
    }
    int status = frame.path("status").asInt();
    if (status == 200) {
      promise.complete(frame.path("payload"));
    } else {
      JsonNode error = frame.path("error");
      promise.fail(new ShineClientException(status, error.path("code").asText(), error.path("message").asText()));
    }
  }

  /** Fails every request still waiting: the connection closed ({@code why}). */
  void failAll(String why) {
    closedWhy = why;
    List<Promise<JsonNode>> waiting = new ArrayList<>(pending.values());
    pending.clear();
    for (Promise<JsonNode> promise : waiting) {
      promise.tryFail(new ShineClientException(0, ShineClient.CONNECTION_CLOSED, why));
    }
  }
}
