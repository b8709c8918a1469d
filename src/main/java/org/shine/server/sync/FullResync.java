package org.shine.server.sync;

import io.vertx.core.Future;
import java.util.Objects;
import org.shine.server.db.SyncRepository;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.PerKeyRate;

/**
 * MarkAllUserSettingsUnsynced (PROTOCOL §5, §8 v3): sets every settings and DM outbox item of a user back to
 * unsynced and queues each again for the user's sibling, at most {@code sync.markAllPerUserPerMin} times a minute
 * per user on this node (a full re-sync costs both siblings the user's whole history); beyond, 429
 * {@code RATE_LIMITED} and nothing is reset.
 */
final class FullResync {
  private final SyncRepository repository;
  private final PerKeyRate rate;
  private final int perMinute;

  FullResync(SyncRepository repository, PerKeyRate rate, int perMinute) {
    this.repository = Objects.requireNonNull(repository);
    this.rate = Objects.requireNonNull(rate);
    this.perMinute = perMinute;
  }

  /** Answers how many items were reset. */
  Future<Integer> markAllUnsynced(String login) {
    return switch (rate.tryAcquire(login)) {
      case GRANTED -> repository.markAllUnsynced(login);
      case LIMITED -> Future.failedFuture(new ProtocolException(Status.TOO_MANY_REQUESTS, ErrorCode.RATE_LIMITED,
          "MarkAllUserSettingsUnsynced is limited to " + perMinute + " per minute per user (sync.markAllPerUserPerMin);"
              + " nothing was reset, retry in a minute"));
      case FULL -> Future.failedFuture(new ProtocolException(Status.TOO_MANY_REQUESTS, ErrorCode.RATE_LIMITED,
          "too many users asked for a full re-sync on this server in the last minute; nothing was reset, retry"
              + " in a minute"));
    };
  }
}
