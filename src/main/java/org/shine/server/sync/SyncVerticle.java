package org.shine.server.sync;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.config.AppConfig;

/**
 * Wires the two-server sync: the source side ({@code sync.dm-batch}, {@code sync.settings-batch},
 * {@code sync.mark-unsynced}, limited per user by the node's {@code resyncRate}), the puller, run at start, on each
 * (re)connection to a peer and every {@code sync.periodMs} (backing off while the database fails, resuming when it
 * is back), and the second look at quarantined items when a card changes ({@code directory.changed}).
 */
public final class SyncVerticle extends VerticleBase {
  private static final String RECHECKS_RUNNING = "sync.quarantine.rechecks";
  private final SyncServices services;
  private long timer = -1;
  private Runnable stopListening = () -> { };

  public SyncVerticle(SyncServices services) {
    this.services = Objects.requireNonNull(services);
  }

  @Override
  public Future<?> start() {
    AppConfig config = services.config();
    Clock clock = services.clock();
    EventBus bus = vertx.eventBus();
    SyncSource source = new SyncSource(services.outbox(), config.limits().maxResponseBytes());
    FullResync resync = new FullResync(services.outbox(), services.resyncRate(), config.sync().markAllPerUserPerMin());
    Quarantine quarantine = new Quarantine(services.quarantine(), services.metrics(), clock);
    SharedOwners owners = new SharedOwners(config.serverLogin(), services.users());
    DmItemApplier dmItems = new DmItemApplier(bus, quarantine, new CardRefresh(config, bus, services.users(),
        services.peers()));
    SettingItemApplier settingItems = new SettingItemApplier(services.settings(), quarantine, clock,
        config.delivery().maxClockSkewMs());
    SyncPuller puller = new SyncPuller(config, services.outbox(), new PageWalk(config, services.peers(), owners),
        settingItems, dmItems, services.health());
    QuarantineRecheck recheck = new QuarantineRecheck(services.quarantine(), dmItems, settingItems, owners, clock,
        vertx.sharedData().getLocalMap(RECHECKS_RUNNING));
    return Future.all(List.of(
            BusReplies.serve(bus, Addresses.SYNC_DM_BATCH, source::dmBatch),
            BusReplies.serve(bus, Addresses.SYNC_SETTINGS_BATCH, source::settingsBatch),
            BusReplies.serve(bus, Addresses.SYNC_MARK_UNSYNCED, resync::markAllUnsynced),
            bus.<String>localConsumer(Addresses.DIRECTORY_CHANGED, m -> recheck.cardChanged(m.body()))
                .completion(),
            bus.<String>localConsumer(Addresses.PEER_CONNECTED, m -> puller.pullAll(m.body())).completion()))
        .onSuccess(v -> {
          vertx.setTimer(1, id -> puller.tick());
          timer = vertx.setPeriodic(config.sync().periodMs(), id -> puller.tick());
          stopListening = services.health().onUp(puller::resume);
        });
  }

  @Override
  public Future<?> stop() {
    stopListening.run();
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    return Future.succeededFuture();
  }
}
