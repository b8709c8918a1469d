package org.shine.server.settings;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import java.time.Clock;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.db.SyncRepository;

/**
 * Wires user settings: {@code settings.get} and {@code settings.set}. A write is stamped with the server clock
 * (at least one past the stored time, so a user's later write always wins here) and becomes an unsynced outbox
 * item for the sibling, where the later timestamp wins.
 */
public final class SettingsVerticle extends VerticleBase {
  private final AppConfig config;
  private final Clock clock;

  public SettingsVerticle(AppConfig config, Clock clock) {
    this.config = config;
    this.clock = clock;
  }

  @Override
  public Future<?> start() {
    SyncRepository repository = new SyncRepository(Database.sharedPool(vertx, config.db()), config.serverLogin());
    EventBus bus = vertx.eventBus();
    return Future.all(
        bus.<String>localConsumer(Addresses.SETTINGS_GET,
            m -> BusReplies.replyWith(m, repository.settings(m.body()).map(UserSettings::new))).completion(),
        bus.<SetSettingCommand>localConsumer(Addresses.SETTINGS_SET, m -> BusReplies.replyWith(m,
            repository.setLocal(m.body().owner(), m.body().key(), m.body().valueJson(), clock.millis())))
            .completion());
  }
}
