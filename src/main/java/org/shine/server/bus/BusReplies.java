package org.shine.server.bus;

import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import java.util.function.Function;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;

/**
 * Request/reply over the local bus with typed failures: the consumer side replies with a {@link BusFailure}
 * carrying the {@link ProtocolException} the failure maps to, the caller side gets that exception back; a timeout
 * or a missing consumer becomes a 503.
 */
public final class BusReplies {
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

  /**
   * Serves {@code address} on this node (Hono's {@code EventBusService}): each request body goes to
   * {@code handler}, and its outcome is the one reply; a failure, thrown or failed, travels typed
   * ({@link BusFailure}). Completes once the consumer is registered.
   */
  public static <T, R> Future<Void> serve(EventBus bus, String address, Function<T, Future<R>> handler) {
    return bus.<T>localConsumer(address, message -> process(handler, message.body())
        .onSuccess(message::reply)
        .onFailure(failure -> message.reply(new BusFailure(Failures.classify(failure))))).completion();
  }

  private static <T, R> Future<R> process(Function<T, Future<R>> handler, T body) {
    try {
      return handler.apply(body);
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
  }

  /**
   * Whether {@code failure} is a local request that got no reply in time (503 {@code OVERLOADED}); the edge may
   * know better why (the database is down) and say so.
   */
  public static boolean isTimeout(Throwable failure) {
    return failure instanceof Timeout;
  }

  private static <T> Future<T> toProtocolFailure(Throwable failure) {
    if (failure instanceof BusFailure typed) {
      return Future.failedFuture(typed.error());
    }
    if (failure instanceof ReplyException reply) {
      switch (reply.failureType()) {
        case RECIPIENT_FAILURE:
          return Future.failedFuture(new ProtocolException(reply.failureCode(), ErrorCode.INTERNAL,
              reply.getMessage() == null ? "" : reply.getMessage()));
        case TIMEOUT:
          return Future.failedFuture(new Timeout());
        case NO_HANDLERS:
        default:
          return Future.failedFuture(new ProtocolException(Status.UNAVAILABLE, ErrorCode.OVERLOADED,
              "service not available on this node"));
      }
    }
    return Future.failedFuture(Failures.classify(failure));
  }

  /** No reply in time: 503, retry later (the request may still complete). */
  private static final class Timeout extends ProtocolException {
    Timeout() {
      super(Status.UNAVAILABLE, ErrorCode.OVERLOADED, "the server did not finish the request in time; retry later");
    }
  }
}
