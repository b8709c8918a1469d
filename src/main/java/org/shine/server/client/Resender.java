package org.shine.server.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import org.shine.server.client.ShineClient.SignedPair;

/**
 * Hands signed requests to one server until each is answered, over a session it reconnects when the connection is
 * lost. A request that gets 503 or 500 may have been stored, and one without an answer (a timeout, a lost
 * connection) may have been too; 429 means nothing was stored. In every such case the same signed bytes go again,
 * never a new nonce: the server answers an identical repeat from what it stored (PROTOCOL §3), so a resend can never
 * make a second message. Waits between attempts double from {@link Policy#firstDelayMs} up to
 * {@link Policy#maxDelayMs}; after {@link Policy#attempts} the last failure is returned. 4xx answers other than 429
 * are final.
 */
public final class Resender {
  private final Vertx vertx;
  private final Supplier<Future<ShineClient>> connect;
  private final Policy policy;
  private volatile Future<ShineClient> session;

  /** How often and how patiently to resend. */
  public record Policy(int attempts, long firstDelayMs, long maxDelayMs, long answerTimeoutMs) {
    /** 8 attempts, 200 ms doubling to 5 s between them, 30 s for each answer. */
    public static final Policy DEFAULT = new Policy(8, 200, 5_000, 30_000);

    public Policy {
      if (attempts < 1 || firstDelayMs < 0 || maxDelayMs < firstDelayMs || answerTimeoutMs <= 0) {
        throw new IllegalArgumentException("invalid resend policy");
      }
    }
  }

  /**
   * {@code connect} opens a new logged-in session (it runs again after a connection is lost); {@code current}, when
   * not null, is a session already open.
   */
  public Resender(Vertx vertx, ShineClient current, Supplier<Future<ShineClient>> connect, Policy policy) {
    this.vertx = Objects.requireNonNull(vertx);
    this.connect = Objects.requireNonNull(connect);
    this.policy = Objects.requireNonNull(policy);
    this.session = current == null ? null : Future.succeededFuture(current);
  }

  /** Sends {@code pair} (its bytes as signed, on every attempt) until it is answered 200 or the attempts run out. */
  public Future<JsonNode> sendPair(SignedPair pair) {
    return untilAnswered(client -> client.sendPair(pair, policy.answerTimeoutMs()));
  }

  /**
   * Runs {@code request} until answered, as {@link #sendPair}; it must send the same bytes each time and give up on
   * its own when no answer comes ({@link ShineClient#request(String, JsonNode, long)}).
   */
  public Future<JsonNode> untilAnswered(Function<ShineClient, Future<JsonNode>> request) {
    Promise<JsonNode> answered = Promise.promise();
    attempt(request, 1, policy.firstDelayMs(), answered);
    return answered.future();
  }

  /** The session in use (connecting it first when there is none or it was lost). */
  public Future<ShineClient> session() {
    Future<ShineClient> current = session;
    if (current == null || current.failed() || (current.succeeded() && current.result().closed())) {
      current = connect.get();
      session = current;
    }
    return current;
  }

  /** Whether a failed request may be sent again with the same bytes. */
  public static boolean worthResending(Throwable failure) {
    if (failure instanceof ShineClientException answer) {
      int status = answer.status();
      return status == 0 || status == 429 || status == 500 || status == 503;
    }
    // no answer at all: a write on a closed connection, a connect that failed
    return true;
  }

  private void attempt(Function<ShineClient, Future<JsonNode>> request, int attempt, long delayMs,
      Promise<JsonNode> answered) {
    session().compose(request).onComplete(ar -> {
      if (ar.succeeded()) {
        answered.tryComplete(ar.result());
      } else if (attempt >= policy.attempts() || !worthResending(ar.cause())) {
        answered.tryFail(ar.cause());
      } else {
        vertx.setTimer(Math.max(1, delayMs),
            id -> attempt(request, attempt + 1, Math.min(policy.maxDelayMs(), delayMs * 2), answered));
      }
    });
  }
}
