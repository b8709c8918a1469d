package org.shine.server.settings;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import java.time.Clock;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.bus.LocalRecordCodec;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.db.SettingsRepository;

/** Wires user settings: {@code settings.get} (a page) and {@code settings.set}, served by {@link SettingsService}. */
public final class SettingsVerticle extends VerticleBase {
  private final AppConfig config;
  private final Clock clock;

  public SettingsVerticle(AppConfig config, Clock clock) {
    this.config = config;
    this.clock = clock;
  }

  @Override
  public Future<?> start() {
    LocalRecordCodec.register(vertx, SetSettingCommand.class, SettingsQuery.class, SettingsPage.class);
    SettingsService settings = new SettingsService(new SettingsRepository(Database.sharedPool(vertx, config.db()),
        config.quotas()), clock, config.limits().maxResponseBytes());
    EventBus bus = vertx.eventBus();
    return Future.all(
        bus.<SettingsQuery>localConsumer(Addresses.SETTINGS_GET,
            m -> BusReplies.replyWith(m, settings.page(m.body()))).completion(),
        bus.<SetSettingCommand>localConsumer(Addresses.SETTINGS_SET,
            m -> BusReplies.replyWith(m, settings.set(m.body()))).completion());
  }
}
