package org.shine.server.directory;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.shine.server.bus.Addresses;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.model.StoredUser;

/**
 * The node's one read-through cache of users (key + current routes). Entries are dropped as soon as a card change
 * is published on {@link Addresses#DIRECTORY_CHANGED} (from any node), and expire after a short TTL as a safety net;
 * at most {@code maxEntries} are kept (beyond, the cache starts over). Shared by every verticle instance of the node,
 * so it runs on several event loops at once: the entries are a concurrent map, the generation an atomic counter, and
 * a load that raced a change drops what it put (see {@link #find}).
 */
public final class DirectoryCache implements UserDirectory {
  /** How long an entry is served without a new read. */
  public static final long TTL_MS = 30_000;
  /** Entries kept at most. */
  public static final int MAX_ENTRIES = 100_000;
  private final Vertx vertx;
  private final DirectoryRepository repository;
  private final long ttlNanos;
  private final int maxEntries;
  private final Map<String, Entry> entries = new ConcurrentHashMap<>();
  private final AtomicLong generation = new AtomicLong();
  private volatile MessageConsumer<String> invalidations;

  public DirectoryCache(Vertx vertx, DirectoryRepository repository, long ttlMs, int maxEntries) {
    if (maxEntries < 1) {
      throw new IllegalArgumentException("maxEntries must be positive");
    }
    this.vertx = Objects.requireNonNull(vertx);
    this.repository = Objects.requireNonNull(repository);
    this.ttlNanos = ttlMs * 1_000_000L;
    this.maxEntries = maxEntries;
  }

  /** Starts listening to card changes; completes once the listener is registered. */
  public Future<Void> start() {
    invalidations = vertx.eventBus().consumer(Addresses.DIRECTORY_CHANGED, message -> {
      generation.incrementAndGet();
      entries.remove(message.body());
    });
    return invalidations.completion();
  }

  /** Stops listening to card changes. */
  public Future<Void> stop() {
    MessageConsumer<String> listening = invalidations;
    return listening == null ? Future.succeededFuture() : listening.unregister();
  }

  /**
   * The user, or empty when the login has no card here. Unknown logins are not cached. A change published while a
   * read was under way may have made that read stale: it is served, but not kept (checked again after the put, as
   * the change may come on another event loop between the check and the put).
   */
  @Override
  public Future<Optional<StoredUser>> find(String login) {
    Entry cached = entries.get(login);
    long now = System.nanoTime();
    if (cached != null && now - cached.loadedAtNanos < ttlNanos) {
      return Future.succeededFuture(Optional.of(cached.user));
    }
    long loadGeneration = generation.get();
    return repository.find(login).onSuccess(found -> {
      if (found.isEmpty() || loadGeneration != generation.get()) {
        entries.remove(login);
        return;
      }
      if (entries.size() >= maxEntries) {
        entries.clear();
      }
      Entry loaded = new Entry(found.get(), now);
      entries.put(login, loaded);
      if (loadGeneration != generation.get()) {
        entries.remove(login, loaded);
      }
    });
  }

  private record Entry(StoredUser user, long loadedAtNanos) {
  }
}
