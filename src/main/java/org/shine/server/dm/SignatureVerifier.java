package org.shine.server.dm;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The node's one place for signature checks: each check runs on the worker pool (never on an event loop), and at
 * most {@code limit} checks wait or run at once on the node; beyond that a check fails at once with
 * {@link QueueFullException} (the edge answers 429). Shared by every verticle instance of a node.
 */
public final class SignatureVerifier {
  private final Vertx vertx;
  private final int limit;
  private final AtomicInteger pending = new AtomicInteger();

  public SignatureVerifier(Vertx vertx, int limit) {
    this.vertx = Objects.requireNonNull(vertx);
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be positive");
    }
    this.limit = limit;
    // chooses the Ed25519 provider now, so that the startup log names it, rather than on the first check
    Ed25519Verifiers.active();
  }

  /** Verifies one container with its author's key. */
  public Future<Boolean> verify(DmContainer container, Ed25519Signer.PublicKey authorKey) {
    return check(() -> container.verifySignature(authorKey));
  }

  /** Verifies that {@code signature} signs {@code message} with the raw {@code publicKey}. */
  public Future<Boolean> verify(byte[] publicKey, byte[] message, byte[] signature) {
    return check(() -> Ed25519Signer.verify(publicKey, message, signature));
  }

  /** Runs any signature check (one or several verifications) as one queued task. */
  public Future<Boolean> check(Callable<Boolean> verification) {
    if (pending.incrementAndGet() > limit) {
      pending.decrementAndGet();
      return Future.failedFuture(new QueueFullException(limit));
    }
    return vertx.executeBlocking(verification, false).onComplete(ar -> pending.decrementAndGet());
  }

  /** Checks waiting or running now. */
  public int pending() {
    return pending.get();
  }

  /** More than the limit of signature checks are waiting: nothing was checked, retry later. */
  public static final class QueueFullException extends RuntimeException {
    public QueueFullException(int limit) {
      super("more than " + limit + " signature checks are waiting on this server; retry later", null, false, false);
    }
  }
}
