package org.shine.server.settings;

import io.vertx.core.Future;
import java.time.Clock;
import java.util.Objects;
import org.shine.server.db.SettingsRepository;

/**
 * A user's settings: reads, and writes stamped with the server clock (at least one past the stored time, so a
 * user's later write always wins here). Each write becomes an unsynced outbox item for the sibling, where the
 * later timestamp wins.
 */
public final class SettingsService {
  private final SettingsRepository repository;
  private final Clock clock;

  public SettingsService(SettingsRepository repository, Clock clock) {
    this.repository = Objects.requireNonNull(repository);
    this.clock = Objects.requireNonNull(clock);
  }

  /** All of {@code owner}'s settings. */
  public Future<UserSettings> settings(String owner) {
    return repository.settings(owner).map(UserSettings::new);
  }

  /** Stores one setting; answers the time it is stored under. */
  public Future<Long> set(SetSettingCommand command) {
    return repository.setLocal(command.owner(), command.key(), command.valueJson(), clock.millis());
  }
}
