package org.shine.server.sync;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import io.vertx.sqlclient.Pool;
import java.time.Clock;
import java.util.List;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.bus.LocalRecordCodec;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.SettingsRepository;
import org.shine.server.db.StorageHealth;
import org.shine.server.db.SyncRepository;
import org.shine.server.peer.PeerCalls;

/**
 * Wires the two-server sync: the source side ({@code sync.dm-batch}, {@code sync.settings-batch},
 * {@code sync.mark-unsynced}) and the puller, run at start, on each (re)connection to a peer and every
 * {@code sync.periodMs} (backing off while the database fails, resuming when it is back).
 */
public final class SyncVerticle extends VerticleBase {
  private final AppConfig config;
  private final Clock clock;
  private final StorageHealth health;
  private long timer = -1;
  private Runnable stopListening = () -> { };

  public SyncVerticle(AppConfig config, Clock clock, StorageHealth health) {
    this.config = config;
    this.clock = clock;
    this.health = health;
  }

  @Override
  public Future<?> start() {
    LocalRecordCodec.register(vertx, SyncBatchRequest.class, DmSyncPage.class, SettingsSyncPage.class);
    Pool pool = Database.sharedPool(vertx, config.db());
    SyncRepository repository = new SyncRepository(pool, config.serverLogin());
    SyncSource source = new SyncSource(repository, config.limits().maxResponseBytes());
    SyncPuller puller = new SyncPuller(config, vertx.eventBus(), repository,
        new SettingsRepository(pool, config.quotas()), new DirectoryRepository(pool), new PeerCalls(vertx.eventBus(), config.delivery().callTimeoutMs()), clock,
        health);
    EventBus bus = vertx.eventBus();
    return Future.all(List.of(
            bus.<SyncBatchRequest>localConsumer(Addresses.SYNC_DM_BATCH,
                m -> BusReplies.replyWith(m, source.dmBatch(m.body()))).completion(),
            bus.<SyncBatchRequest>localConsumer(Addresses.SYNC_SETTINGS_BATCH,
                m -> BusReplies.replyWith(m, source.settingsBatch(m.body()))).completion(),
            bus.<String>localConsumer(Addresses.SYNC_MARK_UNSYNCED,
                m -> BusReplies.replyWith(m, repository.markAllUnsynced(m.body()))).completion(),
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
