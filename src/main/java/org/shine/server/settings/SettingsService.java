package org.shine.server.settings;

import io.vertx.core.Future;
import java.time.Clock;
import java.util.Objects;
import org.shine.server.db.SettingsRepository;

/**
 * A user's settings: pages of them, and writes stamped with the server clock (at least one past the stored time, so
 * a user's later write always wins here) within the user's quotas. Each write becomes an unsynced outbox item for
 * the sibling, where the later timestamp wins.
 */
public final class SettingsService {
  private final SettingsRepository repository;
  private final Clock clock;
  private final int maxResponseBytes;

  public SettingsService(SettingsRepository repository, Clock clock, int maxResponseBytes) {
    this.repository = Objects.requireNonNull(repository);
    this.clock = Objects.requireNonNull(clock);
    this.maxResponseBytes = maxResponseBytes;
  }

  /** One page of the owner's settings: at most {@code query.limit()}, and no more than fit one response. */
  public Future<SettingsPage> page(SettingsQuery query) {
    return repository.page(query.owner(), query.afterKey(), query.limit() + 1)
        .map(read -> SettingsPage.of(read, query.limit(), maxResponseBytes));
  }

  /** Stores one setting; answers the time it is stored under. */
  public Future<Long> set(SetSettingCommand command) {
    return repository.setLocal(command.owner(), command.key(), command.valueJson(), clock.millis());
  }
}
