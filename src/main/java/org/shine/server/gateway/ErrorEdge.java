package org.shine.server.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import org.shine.server.bus.BusReplies;
import org.shine.server.bus.Failures;
import org.shine.server.metrics.SendOutcome;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.Ops;
import org.shine.server.protocol.ProtocolErrors;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where every failure of a session's request becomes its answer, once: classified ({@link Failures}: an unexpected
 * failure is 500 {@code INTERNAL} and is logged there at ERROR with its stack), a bus timeout while the database is
 * known down told as 503 {@code STORAGE_UNAVAILABLE}, logged (client errors at debug with their message and no
 * stack, server errors at warn, storage outages at debug since {@link org.shine.server.db.StorageHealth} logs each
 * outage once), counted ({@code shine_sends_total} of a SendMessagePair) and written as one error frame. A
 * successful answer is counted and written here too, so that each SendMessagePair is counted in one place.
 */
final class ErrorEdge {
  /** The gateway's log lines keep the gateway's logger name (operators filter on it). */
  private static final Logger LOG = LoggerFactory.getLogger(GatewayVerticle.class);
  private final Frames frames;
  private final ShineMetrics metrics;
  private final BooleanSupplier storageUp;
  private final Runnable suspectStorage;
  private final BiConsumer<Session, String> writer;

  /**
   * {@code storageUp} and {@code suspectStorage}: the node's view of its database ({@code StorageHealth.isUp},
   * {@code suspect}); {@code writer}: writes a frame to a session.
   */
  ErrorEdge(Frames frames, ShineMetrics metrics, BooleanSupplier storageUp, Runnable suspectStorage,
      BiConsumer<Session, String> writer) {
    this.frames = Objects.requireNonNull(frames);
    this.metrics = Objects.requireNonNull(metrics);
    this.storageUp = Objects.requireNonNull(storageUp);
    this.suspectStorage = Objects.requireNonNull(suspectStorage);
    this.writer = Objects.requireNonNull(writer);
  }

  /** Answers {@code op} ({@code requestId}) of {@code session} with the error {@code failure} maps to. */
  void fail(Session session, String op, JsonNode requestId, Throwable failure) {
    ProtocolException error = classify(failure);
    if (Ops.SEND_MESSAGE_PAIR.equals(op)) {
      metrics.sent(refusedOutcome(error.status()));
    }
    if (ErrorCode.STORAGE_UNAVAILABLE.equals(error.code())) {
      // StorageHealth logs the outage once; one line per request would bury it
      suspectStorage.run();
      LOG.debug("request failed [op: {}, session: {}, status: {}, code: {}]", op, session.who(), error.status(),
          error.code());
    } else if (error.status() >= Status.INTERNAL) {
      LOG.warn("request failed [op: {}, session: {}, status: {}, code: {}]", op, session.who(), error.status(),
          error.code());
    } else {
      LOG.debug("request refused [op: {}, session: {}, status: {}, code: {}]: {}", op, session.who(),
          error.status(), error.code(), error.getMessage());
    }
    writer.accept(session, frames.error(op, requestId, error.status(), error.code(), error.getMessage()));
  }

  /** Answers {@code op} ({@code requestId}) of {@code session} with {@code payload}. */
  void answer(Session session, String op, JsonNode requestId, JsonNode payload) {
    if (Ops.SEND_MESSAGE_PAIR.equals(op)) {
      metrics.sent(sendOutcome(payload.path("deliveryState").asText()));
    }
    writer.accept(session, frames.response(op, requestId, payload));
  }

  private ProtocolException classify(Throwable failure) {
    ProtocolException error = Failures.classify(failure);
    if (BusReplies.isTimeout(error) && !storageUp.getAsBoolean()) {
      // the service waited on the database that is now known to be down
      return ProtocolErrors.storageUnavailable();
    }
    return error;
  }

  private static SendOutcome sendOutcome(String deliveryState) {
    return switch (deliveryState) {
      case "delivered" -> SendOutcome.DELIVERED;
      case "failed" -> SendOutcome.FAILED;
      default -> SendOutcome.ACCEPTED;
    };
  }

  private static SendOutcome refusedOutcome(int status) {
    if (status == Status.TOO_MANY_REQUESTS || status == Status.UNAVAILABLE) {
      return SendOutcome.OVERLOADED;
    }
    return status >= Status.INTERNAL ? SendOutcome.ERROR : SendOutcome.REFUSED;
  }
}
