package org.shine.server.bus;

import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import org.shine.server.db.StorageErrors;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Request/reply over the bus with typed failures: the consumer side turns any failure into
 * {@code fail(status, "CODE message")}, the caller side turns it back into a {@link ProtocolException}.
 */
public final class BusReplies {
  private static final Logger LOG = LoggerFactory.getLogger(BusReplies.class);
  private static final long DEFAULT_TIMEOUT_MS = 30_000;

  private BusReplies() {
  }

  /** Sends a local request and maps TIMEOUT / NO_HANDLERS / RECIPIENT_FAILURE to protocol errors. */
  public static <T> Future<T> request(EventBus bus, String address, Object body) {
    return request(bus, address, body, DEFAULT_TIMEOUT_MS);
  }

  /** As {@link #request(EventBus, String, Object)} with an explicit send timeout. */
  public static <T> Future<T> request(EventBus bus, String address, Object body, long timeoutMs) {
    DeliveryOptions options = new DeliveryOptions().setLocalOnly(true).setSendTimeout(timeoutMs);
    return bus.<T>request(address, body, options)
        .recover(BusReplies::toProtocolFailure)
        .map(Message::body);
  }

  /** Replies to {@code message} with the outcome of {@code work}. */
  public static <T> void replyWith(Message<?> message, Future<T> work) {
    work.onSuccess(message::reply).onFailure(failure -> {
      ProtocolException error = asProtocolException(failure);
      message.fail(error.status(), error.code() + ' ' + error.getMessage());
    });
  }

  /** Classifies any failure: protocol errors stay, storage trouble becomes 503, the rest 500 (logged once). */
  public static ProtocolException asProtocolException(Throwable failure) {
    if (failure instanceof ProtocolException protocol) {
      return protocol;
    }
    if (failure instanceof SignatureVerifier.QueueFullException full) {
      return new ProtocolException(Status.TOO_MANY_REQUESTS, ErrorCode.OVERLOADED, full.getMessage());
    }
    if (StorageErrors.isUnavailable(failure)) {
      LOG.warn("storage unavailable: {}", failure.toString());
      return new ProtocolException(Status.UNAVAILABLE, ErrorCode.STORAGE_UNAVAILABLE, "storage is unavailable, retry later");
    }
    LOG.error("internal error", failure);
    return new ProtocolException(Status.INTERNAL, ErrorCode.INTERNAL, "internal error");
  }

  private static <T> Future<T> toProtocolFailure(Throwable failure) {
    if (failure instanceof ReplyException reply) {
      switch (reply.failureType()) {
        case RECIPIENT_FAILURE:
          String text = reply.getMessage() == null ? "" : reply.getMessage();
          int space = text.indexOf(' ');
          String code = space > 0 ? text.substring(0, space) : ErrorCode.INTERNAL;
          String message = space > 0 ? text.substring(space + 1) : text;
          return Future.failedFuture(new ProtocolException(reply.failureCode(), code, message));
        case TIMEOUT:
          return Future.failedFuture(new ProtocolException(Status.UNAVAILABLE, ErrorCode.OVERLOADED,
              "the server did not finish the request in time; retry later"));
        case NO_HANDLERS:
        default:
          return Future.failedFuture(new ProtocolException(Status.UNAVAILABLE, ErrorCode.OVERLOADED,
              "service not available on this node"));
      }
    }
    return Future.failedFuture(asProtocolException(failure));
  }
}
