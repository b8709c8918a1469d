package org.shine.server.sync;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import io.vertx.sqlclient.Pool;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.bus.LocalRecordCodec;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.QuarantineRepository;
import org.shine.server.db.SettingsRepository;
import org.shine.server.db.StorageHealth;
import org.shine.server.db.SyncRepository;
import org.shine.server.directory.PublishCardCommand;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.peer.PeerCalls;
import org.shine.server.util.PerKeyRate;

/**
 * Wires the two-server sync: the source side ({@code sync.dm-batch}, {@code sync.settings-batch},
 * {@code sync.mark-unsynced}, limited per user by the node's {@code resyncRate}), the puller, run at start, on each
 * (re)connection to a peer and every {@code sync.periodMs} (backing off while the database fails, resuming when it
 * is back), and the second look at quarantined items when a card changes ({@code directory.changed}).
 */
public final class SyncVerticle extends VerticleBase {
  private static final String RECHECKS_RUNNING = "sync.quarantine.rechecks";
  private final AppConfig config;
  private final Clock clock;
  private final StorageHealth health;
  private final ShineMetrics metrics;
  private final PerKeyRate resyncRate;
  private long timer = -1;
  private Runnable stopListening = () -> { };

  /** {@code resyncRate}: the node's one limit of MarkAllUserSettingsUnsynced per user, shared by every instance. */
  public SyncVerticle(AppConfig config, Clock clock, StorageHealth health, ShineMetrics metrics,
      PerKeyRate resyncRate) {
    this.config = Objects.requireNonNull(config);
    this.clock = Objects.requireNonNull(clock);
    this.health = Objects.requireNonNull(health);
    this.metrics = Objects.requireNonNull(metrics);
    this.resyncRate = Objects.requireNonNull(resyncRate);
  }

  @Override
  public Future<?> start() {
    LocalRecordCodec.register(vertx, SyncBatchRequest.class, DmSyncPage.class, SettingsSyncPage.class,
        PublishCardCommand.class);
    Pool pool = Database.sharedPool(vertx, config.db());
    EventBus bus = vertx.eventBus();
    SyncRepository repository = new SyncRepository(pool, config.serverLogin());
    SyncSource source = new SyncSource(repository, config.limits().maxResponseBytes());
    FullResync resync = new FullResync(repository, resyncRate, config.sync().markAllPerUserPerMin());
    DirectoryRepository directory = new DirectoryRepository(pool);
    PeerCalls peers = new PeerCalls(bus, config.delivery().callTimeoutMs());
    QuarantineRepository quarantined = new QuarantineRepository(pool);
    Quarantine quarantine = new Quarantine(quarantined, metrics, clock);
    SharedOwners owners = new SharedOwners(config.serverLogin(), directory);
    DmItemApplier dmItems = new DmItemApplier(bus, quarantine, new CardRefresh(config, bus, directory, peers));
    SettingItemApplier settingItems = new SettingItemApplier(new SettingsRepository(pool, config.quotas()),
        quarantine, clock, config.delivery().maxClockSkewMs());
    SyncPuller puller = new SyncPuller(config, repository, new PageWalk(config, peers, owners), settingItems,
        dmItems, clock, health);
    QuarantineRecheck recheck = new QuarantineRecheck(quarantined, dmItems, settingItems, owners, clock,
        vertx.sharedData().getLocalMap(RECHECKS_RUNNING));
    return Future.all(List.of(
            bus.<SyncBatchRequest>localConsumer(Addresses.SYNC_DM_BATCH,
                m -> BusReplies.replyWith(m, source.dmBatch(m.body()))).completion(),
            bus.<SyncBatchRequest>localConsumer(Addresses.SYNC_SETTINGS_BATCH,
                m -> BusReplies.replyWith(m, source.settingsBatch(m.body()))).completion(),
            bus.<String>localConsumer(Addresses.SYNC_MARK_UNSYNCED,
                m -> BusReplies.replyWith(m, resync.markAllUnsynced(m.body()))).completion(),
            bus.<String>localConsumer(Addresses.DIRECTORY_CHANGED, m -> recheck.cardChanged(m.body()))
                .completion(),
            bus.<String>localConsumer(Addresses.PEER_CONNECTED, m -> puller.pullAll(m.body())).completion()))
        .onSuccess(v -> {
          vertx.setTimer(1, id -> puller.tick());
          timer = vertx.setPeriodic(config.sync().periodMs(), id -> puller.tick());
          stopListening = health.onUp(puller::resume);
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
