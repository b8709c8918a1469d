package org.shine.server.settings;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import java.time.Clock;
import java.util.Objects;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.config.AppConfig;
import org.shine.server.db.SettingsRepository;

/** Wires user settings: {@code settings.get} (a page) and {@code settings.set}, served by {@link SettingsService}. */
public final class SettingsVerticle extends VerticleBase {
  private final AppConfig config;
  private final Clock clock;
  private final SettingsRepository repository;

  public SettingsVerticle(AppConfig config, Clock clock, SettingsRepository repository) {
    this.config = Objects.requireNonNull(config);
    this.clock = Objects.requireNonNull(clock);
    this.repository = Objects.requireNonNull(repository);
  }

  @Override
  public Future<?> start() {
    SettingsService settings = new SettingsService(repository, clock, config.limits().maxResponseBytes());
    EventBus bus = vertx.eventBus();
    return Future.all(
        BusReplies.serve(bus, Addresses.SETTINGS_GET, settings::page),
        BusReplies.serve(bus, Addresses.SETTINGS_SET, settings::set));
  }
}
