package org.shine.server.util;

import io.netty.util.concurrent.EventExecutor;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Liveness of a node (PROTOCOL §11-§12, {@code GET /health}): runs a no-op on every event loop of the Vert.x
 * instance and times it; the node is alive while every loop answers within the bound. A loop that is wedged (a
 * handler that never returns, a thread that died) leaves new connections on it unanswered, which a liveness check
 * of the answering loop alone would never see. One check at a time per instance, its report kept for
 * {@link #REUSE_MS}, so a flood of probes costs one round. Use from one event-loop context.
 */
public final class Liveness {
  /** Every event loop must run a no-op within this; Vert.x itself warns of a blocked loop after 2 s. */
  public static final long DEFAULT_BOUND_MS = 5_000;
  private static final long REUSE_MS = 1_000;
  private final Vertx vertx;
  private final long boundMs;
  private Future<Report> last;
  private long lastAtNanos;

  public Liveness(Vertx vertx, long boundMs) {
    this.vertx = Objects.requireNonNull(vertx);
    if (boundMs < 1) {
      throw new IllegalArgumentException("boundMs must be positive");
    }
    this.boundMs = boundMs;
  }

  /** The report of a round started now, or of the running one, or of one that ended less than a second ago. */
  public Future<Report> check() {
    long now = System.nanoTime();
    if (last != null && (!last.isComplete() || now - lastAtNanos < REUSE_MS * 1_000_000L)) {
      return last;
    }
    lastAtNanos = now;
    last = round();
    return last;
  }

  private Future<Report> round() {
    ContextInternal caller = (ContextInternal) vertx.getOrCreateContext();
    List<Future<Long>> answers = new ArrayList<>();
    List<Promise<Long>> promises = new ArrayList<>();
    long start = System.nanoTime();
    for (EventExecutor loop : ((VertxInternal) vertx).nettyEventLoopGroup()) {
      // completed on the loop itself, its listeners run back on the caller's context
      Promise<Long> answered = caller.promise();
      promises.add(answered);
      answers.add(answered.future());
      loop.execute(() -> answered.tryComplete(System.nanoTime() - start));
    }
    long timer = vertx.setTimer(boundMs, id -> promises.forEach(p -> p.tryFail("no answer within " + boundMs + " ms")));
    return Future.join(answers).otherwiseEmpty().map(v -> {
      vertx.cancelTimer(timer);
      int silent = 0;
      long slowestNanos = 0;
      for (Future<Long> answer : answers) {
        if (answer.succeeded()) {
          slowestNanos = Math.max(slowestNanos, answer.result());
        } else {
          silent++;
        }
      }
      return new Report(answers.size(), silent, slowestNanos / 1_000_000, boundMs);
    });
  }

  /** One round: how many event loops there are, how many did not answer within {@code boundMs}, the slowest. */
  public record Report(int eventLoops, int silent, long slowestMs, long boundMs) {
    public boolean alive() {
      return silent == 0;
    }
  }
}
