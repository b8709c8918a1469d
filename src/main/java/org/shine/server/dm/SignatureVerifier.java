package org.shine.server.dm;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.metrics.SignatureOp;

/**
 * The node's one place for signature checks: each check runs on the worker pool (never on an event loop), and at
 * most {@code limit} checks wait or run at once on the node; beyond that a check fails at once with
 * {@link QueueFullException} (the edge answers 429). Every verification performed is counted by its
 * {@link SignatureOp}. Shared by every verticle instance of a node.
 */
public final class SignatureVerifier {
  private final Vertx vertx;
  private final int limit;
  private final ShineMetrics metrics;
  private final AtomicInteger pending = new AtomicInteger();

  public SignatureVerifier(Vertx vertx, int limit, ShineMetrics metrics) {
    this.vertx = Objects.requireNonNull(vertx);
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be positive");
    }
    this.limit = limit;
    this.metrics = Objects.requireNonNull(metrics);
    // chooses the Ed25519 provider now (at once when chooseProvider did), so that the startup log names it, rather
    // than on the first check
    Ed25519Verifiers.active();
  }

  /**
   * Chooses the Ed25519 provider on a worker thread: loading the native one (its library unpacked and self-tested)
   * takes a second or more on a busy machine, which no event loop may wait for. A node calls this before it builds
   * its verifier.
   */
  public static Future<Void> chooseProvider(Vertx vertx) {
    return vertx.executeBlocking(() -> {
      Ed25519Verifiers.active();
      return null;
    }, false);
  }

  /** Without counting (unit tests). */
  public SignatureVerifier(Vertx vertx, int limit) {
    this(vertx, limit, ShineMetrics.disabled());
  }

  /** Verifies one container with its author's key. */
  public Future<Boolean> verify(DmContainer container, Ed25519Signer.PublicKey authorKey) {
    return check(opOf(container.kind()), () -> container.verifySignature(authorKey));
  }

  /** Verifies several containers of one author as one queued task: true when every signature verifies. */
  public Future<Boolean> verifyAll(List<DmContainer> containers, Ed25519Signer.PublicKey authorKey) {
    return submit(() -> {
      for (DmContainer container : containers) {
        metrics.signatureVerified(opOf(container.kind()));
        if (!container.verifySignature(authorKey)) {
          return false;
        }
      }
      return true;
    });
  }

  /**
   * Checks several containers of one author against the author's keys as one queued task: the standing of the
   * weakest signature ({@link KeyRing.Match#NONE} as soon as one verifies with no key of the ring).
   */
  public Future<KeyRing.Match> match(List<DmContainer> containers, KeyRing keys) {
    return submit(() -> {
      KeyRing.Match weakest = KeyRing.Match.CURRENT;
      for (DmContainer container : containers) {
        metrics.signatureVerified(opOf(container.kind()));
        weakest = weakest.weaker(keys.match(container));
        if (weakest.standing() == KeyRing.Standing.NONE) {
          return weakest;
        }
      }
      return weakest;
    });
  }

  /** Verifies that {@code signature} signs {@code message} with the raw {@code publicKey}. */
  public Future<Boolean> verify(SignatureOp op, byte[] publicKey, byte[] message, byte[] signature) {
    return check(op, () -> Ed25519Signer.verify(publicKey, message, signature));
  }

  /** Runs one signature verification of kind {@code op} as one queued task; answers what it answers. */
  public <T> Future<T> check(SignatureOp op, Callable<T> verification) {
    Objects.requireNonNull(op);
    return submit(() -> {
      metrics.signatureVerified(op);
      return verification.call();
    });
  }

  /**
   * Makes one signature with this node's key off the event loop, in the same bounded queue as the checks (a
   * server's hello and login, PROTOCOL §6a: an anonymous caller must not be able to make the loop sign).
   */
  public Future<byte[]> sign(Callable<byte[]> signing) {
    return submit(signing);
  }

  /** Checks waiting or running now. */
  public int pending() {
    return pending.get();
  }

  private <T> Future<T> submit(Callable<T> task) {
    if (pending.incrementAndGet() > limit) {
      pending.decrementAndGet();
      return Future.failedFuture(new QueueFullException(limit));
    }
    return vertx.executeBlocking(task, false).onComplete(ar -> pending.decrementAndGet());
  }

  private static SignatureOp opOf(DmKind kind) {
    return switch (kind) {
      case INCOMING, OUTGOING -> SignatureOp.MESSAGE;
      case READ_RECEIPT -> SignatureOp.RECEIPT;
      case TOMBSTONE -> SignatureOp.TOMBSTONE;
    };
  }

  /** More than the limit of signature checks are waiting: nothing was checked, retry later. */
  public static final class QueueFullException extends RuntimeException {
    public QueueFullException(int limit) {
      super("more than " + limit + " signature checks are waiting on this server; retry later", null, false, false);
    }
  }
}
