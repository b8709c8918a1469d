package org.shine.server.directory;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.shine.server.bus.Addresses;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.model.StoredUser;
import org.shine.server.protocol.ProtocolErrors;

/**
 * A per-verticle read-through cache of users (key + current routes). Entries are dropped as soon as a card
 * change is published on {@link Addresses#DIRECTORY_CHANGED} (from any node), and expire after a short TTL as a
 * safety net. Confined to the owning verticle's event loop.
 */
public final class DirectoryCache {
  private static final int MAX_ENTRIES = 100_000;
  private final Vertx vertx;
  private final DirectoryRepository repository;
  private final long ttlMs;
  private final Map<String, Entry> entries = new HashMap<>();
  private MessageConsumer<String> invalidations;
  private long generation;

  public DirectoryCache(Vertx vertx, DirectoryRepository repository, long ttlMs) {
    this.vertx = vertx;
    this.repository = repository;
    this.ttlMs = ttlMs;
  }

  public Future<Void> start() {
    invalidations = vertx.eventBus().consumer(Addresses.DIRECTORY_CHANGED, message -> {
      generation++;
      entries.remove(message.body());
    });
    return invalidations.completion();
  }

  /** The user, or empty when the login has no card here. Unknown logins are not cached. */
  public Future<Optional<StoredUser>> find(String login) {
    Entry entry = entries.get(login);
    long now = System.nanoTime();
    if (entry != null && now - entry.loadedAtNanos < ttlMs * 1_000_000L) {
      return Future.succeededFuture(Optional.of(entry.user));
    }
    long loadGeneration = generation;
    return repository.find(login).onSuccess(found -> {
      // a change published while loading may have made this read stale: serve it, but do not keep it
      if (found.isPresent() && loadGeneration == generation) {
        if (entries.size() >= MAX_ENTRIES) {
          entries.clear();
        }
        entries.put(login, new Entry(found.get(), now));
      } else {
        entries.remove(login);
      }
    });
  }

  /** The user, or a 404 {@code USER_NOT_FOUND} failure when the login has no card here. */
  public Future<StoredUser> require(String login) {
    return find(login).map(found -> found.orElseThrow(() -> ProtocolErrors.userNotFound(login)));
  }

  private record Entry(StoredUser user, long loadedAtNanos) {
  }
}
