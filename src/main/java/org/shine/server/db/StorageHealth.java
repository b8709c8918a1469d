package org.shine.server.db;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.shine.server.config.AppConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's view of its database, shared by every verticle of the node: up until a check fails, then down until a
 * check succeeds, with one WARN line per change (never one per failed request). A check is {@code SELECT 1} on a
 * connection of its own (so a busy pool does not read as a dead database), cut after {@code db.connectTimeoutMs}.
 * Anyone who sees storage trouble {@linkplain #report reports} it and a check runs; while down the node checks again
 * by itself, waiting {@value #FIRST_RECHECK_MS} ms and doubling up to {@value #MAX_RECHECK_MS} ms, so the return is
 * noticed within a second without any traffic, and every {@linkplain #onUp listener} (the retry and sync timers) is
 * told. Thread-safe: verticles on several event loops use it.
 */
public final class StorageHealth {
  private static final Logger LOG = LoggerFactory.getLogger(StorageHealth.class);
  static final long FIRST_RECHECK_MS = 50;
  static final long MAX_RECHECK_MS = 1_000;
  private final Vertx vertx;
  private final Pool probe;
  private final String name;
  private final long checkTimeoutMs;
  private final AtomicBoolean up = new AtomicBoolean(true);
  private final AtomicReference<Future<Boolean>> running = new AtomicReference<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicLong downSinceNanos = new AtomicLong();
  private final List<Listener> listeners = new CopyOnWriteArrayList<>();

  private StorageHealth(Vertx vertx, Pool probe, String name, long checkTimeoutMs) {
    this.vertx = Objects.requireNonNull(vertx);
    this.probe = Objects.requireNonNull(probe);
    this.name = Objects.requireNonNull(name);
    this.checkTimeoutMs = checkTimeoutMs;
  }

  /** The health of the database of {@code db}, checked over a one-connection pool of its own. */
  public static StorageHealth open(Vertx vertx, AppConfig.Db db) {
    Pool probe = PgBuilder.pool().with(Database.poolOptions("shine-health", 1)).with(Database.netOptions(db))
        .connectingTo(Database.connectOptions(db)).using(vertx).build();
    return new StorageHealth(vertx, probe, db.host() + ':' + db.port() + '/' + db.database(),
        Math.max(1, db.connectTimeoutMs()));
  }

  public boolean isUp() {
    return up.get();
  }

  /**
   * Someone saw {@code failure}: when it is storage trouble and the database was up, a check runs now (a connection
   * cut once, with the database still there, changes nothing).
   */
  public void report(Throwable failure) {
    if (StorageErrors.isUnavailable(failure)) {
      suspect();
    }
  }

  /** Storage trouble was seen (already classified): checks now unless a check is running or it is known down. */
  public void suspect() {
    if (up.get()) {
      checkOnce();
    }
  }

  /** Checks the database now (or joins the check that runs); completes with whether it answered. */
  public Future<Boolean> check() {
    return checkOnce();
  }

  /**
   * Runs {@code listener} on the caller's context each time the database comes back; the returned action removes
   * it.
   */
  public Runnable onUp(Runnable listener) {
    Listener entry = new Listener(Vertx.currentContext(), Objects.requireNonNull(listener));
    listeners.add(entry);
    return () -> listeners.remove(entry);
  }

  public Future<Void> close() {
    closed.set(true);
    listeners.clear();
    return Database.close(probe, checkTimeoutMs);
  }

  private Future<Boolean> checkOnce() {
    Promise<Boolean> decided = Promise.promise();
    if (!running.compareAndSet(null, decided.future())) {
      Future<Boolean> current = running.get();
      return current == null ? Future.succeededFuture(up.get()) : current;
    }
    Promise<Void> answered = Promise.promise();
    long timer = vertx.setTimer(checkTimeoutMs, id -> answered.tryFail(
        new TimeoutException("no answer in " + checkTimeoutMs + " ms")));
    probe.query("SELECT 1").execute().onComplete(ar -> {
      vertx.cancelTimer(timer);
      if (ar.succeeded()) {
        answered.tryComplete();
      } else {
        answered.tryFail(ar.cause());
      }
    });
    answered.future().onComplete(ar -> {
      if (ar.succeeded()) {
        markUp();
      } else {
        markDown(ar.cause());
      }
      running.set(null);
      decided.complete(ar.succeeded());
    });
    return decided.future();
  }

  private void markDown(Throwable cause) {
    if (up.compareAndSet(true, false)) {
      downSinceNanos.set(System.nanoTime());
      LOG.warn("database unavailable [db: {}]: {}; requests answer 503 STORAGE_UNAVAILABLE until it returns", name,
          cause.toString());
      recheck(FIRST_RECHECK_MS);
    }
  }

  private void markUp() {
    if (up.compareAndSet(false, true)) {
      long downMs = (System.nanoTime() - downSinceNanos.get()) / 1_000_000;
      LOG.warn("database available again [db: {}] after {} ms", name, downMs);
      for (Listener listener : listeners) {
        if (listener.context == null) {
          listener.action.run();
        } else {
          listener.context.runOnContext(v -> listener.action.run());
        }
      }
    }
  }

  /** While down: checks again after {@code delayMs}, then twice as long, up to the cap, until one succeeds. */
  private void recheck(long delayMs) {
    if (closed.get()) {
      return;
    }
    vertx.setTimer(delayMs, id -> {
      if (up.get() || closed.get()) {
        return;
      }
      checkOnce().onComplete(ar -> {
        if (!up.get()) {
          recheck(Math.min(MAX_RECHECK_MS, delayMs * 2));
        }
      });
    });
  }

  private record Listener(Context context, Runnable action) {
  }
}
