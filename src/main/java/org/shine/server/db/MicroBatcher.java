package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * Groups concurrent requests into batches without adding delay: a request runs at once when a batch slot is
 * free, otherwise it waits for the next batch, which leaves as soon as a running one completes. Each caller's
 * future completes when its own batch has finished (for writes: after its commit). Items with equal keys never
 * share a batch. When a batch of several items fails, each item is retried alone so that one bad item fails
 * only its own request. Confined to one event loop.
 */
public final class MicroBatcher<I, O> {
  /**
   * The queue for which a batch starts beside a running one (issue 18, group small transactions): below it, what
   * arrives during a statement leaves with the next one. Federated traffic arrives a few items per statement, so
   * several statements at once each carried ~3 items; one at a time carries what came meanwhile (S2 warm 264–292 →
   * 517–621 pairs/s, PostgreSQL 2.8–3.0 → 1.2–1.3 ms a pair), and a saturated server (S1) still fills every slot.
   */
  public static final int QUEUE_FOR_EXTRA_BATCH = 16;
  private final Function<List<I>, Future<List<O>>> batchFunction;
  private final Function<I, Object> keyOf;
  private final int maxBatchSize;
  private final int maxConcurrentBatches;
  private final int queueCapacity;
  private final int extraBatchAt;
  private final ArrayDeque<Pending<I, O>> queue = new ArrayDeque<>();
  private int running;

  /**
   * A batcher whose batch beside a running one starts only for a queue of {@link #QUEUE_FOR_EXTRA_BATCH}.
   *
   * @param batchFunction runs one batch and answers one output per input, in order
   * @param keyOf         the identity that must be unique within a batch
   */
  public MicroBatcher(Function<List<I>, Future<List<O>>> batchFunction, Function<I, Object> keyOf,
      int maxBatchSize, int maxConcurrentBatches, int queueCapacity) {
    this(batchFunction, keyOf, maxBatchSize, maxConcurrentBatches, queueCapacity, QUEUE_FOR_EXTRA_BATCH);
  }

  /**
   * As above; a batch beyond the first running one starts only when at least {@code extraBatchAt} items wait: below
   * that the waiting items go together when the running batch ends (one transaction for what arrived during it,
   * not one each), above it the extra slots carry the load. 1: every free slot starts a batch at once.
   */
  public MicroBatcher(Function<List<I>, Future<List<O>>> batchFunction, Function<I, Object> keyOf,
      int maxBatchSize, int maxConcurrentBatches, int queueCapacity, int extraBatchAt) {
    if (extraBatchAt < 1) {
      throw new IllegalArgumentException("extraBatchAt must be at least 1: " + extraBatchAt);
    }
    this.batchFunction = Objects.requireNonNull(batchFunction);
    this.keyOf = Objects.requireNonNull(keyOf);
    this.maxBatchSize = maxBatchSize;
    this.maxConcurrentBatches = maxConcurrentBatches;
    this.queueCapacity = queueCapacity;
    this.extraBatchAt = extraBatchAt;
  }

  /**
   * Runs or queues one item; fails at once with {@link StorageBusyException} when every slot is busy and the queue
   * is full.
   */
  public Future<O> submit(I item) {
    if (running >= maxConcurrentBatches && queue.size() >= queueCapacity) {
      return Future.failedFuture(
          new StorageBusyException("the server is overloaded; nothing was stored, retry later"));
    }
    Promise<O> promise = Promise.promise();
    queue.add(new Pending<>(item, promise));
    drain();
    return promise.future();
  }

  public int queued() {
    return queue.size();
  }

  private void drain() {
    while (running < maxConcurrentBatches && !queue.isEmpty() && (running == 0 || queue.size() >= extraBatchAt)) {
      List<Pending<I, O>> batch = takeBatch();
      running++;
      run(batch).onComplete(ar -> {
        running--;
        drain();
      });
    }
  }

  private List<Pending<I, O>> takeBatch() {
    List<Pending<I, O>> batch = new ArrayList<>(Math.min(queue.size(), maxBatchSize));
    Set<Object> keys = new HashSet<>();
    for (Iterator<Pending<I, O>> it = queue.iterator(); it.hasNext() && batch.size() < maxBatchSize; ) {
      Pending<I, O> pending = it.next();
      if (keys.add(keyOf.apply(pending.item))) {
        batch.add(pending);
        it.remove();
      }
    }
    return batch;
  }

  private Future<Void> run(List<Pending<I, O>> batch) {
    List<I> items = new ArrayList<>(batch.size());
    for (Pending<I, O> pending : batch) {
      items.add(pending.item);
    }
    return safeApply(items).transform(ar -> {
      if (ar.succeeded() && ar.result().size() == batch.size()) {
        for (int i = 0; i < batch.size(); i++) {
          batch.get(i).promise.complete(ar.result().get(i));
        }
        return Future.succeededFuture();
      }
      if (batch.size() == 1) {
        batch.get(0).promise.fail(ar.failed() ? ar.cause() : new IllegalStateException("batch answered wrong size"));
        return Future.succeededFuture();
      }
      return runEachAlone(batch);
    });
  }

  private Future<Void> runEachAlone(List<Pending<I, O>> batch) {
    Future<Void> chain = Future.succeededFuture();
    for (Pending<I, O> pending : batch) {
      chain = chain.compose(v -> run(List.of(pending)));
    }
    return chain;
  }

  private Future<List<O>> safeApply(List<I> items) {
    try {
      return batchFunction.apply(items);
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
  }

  private record Pending<I, O>(I item, Promise<O> promise) {
  }
}
