package org.shine.server.sync;

import io.vertx.core.Future;
import java.util.List;
import java.util.Objects;
import org.shine.server.db.SyncRepository;

/**
 * The source side of DmSyncBatch and UserSettingsSyncBatch (PROTOCOL §8): flip the ACKed items of the previous
 * page to synced, then hand out the oldest unsynced ones. An item whose ACK is lost stays unsynced and comes
 * again.
 */
public final class SyncSource {
  private final SyncRepository repository;

  public SyncSource(SyncRepository repository) {
    this.repository = Objects.requireNonNull(repository);
  }

  public Future<DmSyncPage> dmBatch(SyncBatchRequest request) {
    return repository.ack(request.puller(), request.ackSyncIds()).compose(acked -> request.limit() == 0
        ? Future.succeededFuture(new DmSyncPage(List.of(), false))
        : repository.dmPage(request.puller(), request.limit() + 1).map(items -> new DmSyncPage(
            items.subList(0, Math.min(items.size(), request.limit())), items.size() > request.limit())));
  }

  public Future<SettingsSyncPage> settingsBatch(SyncBatchRequest request) {
    return repository.ack(request.puller(), request.ackSyncIds()).compose(acked -> request.limit() == 0
        ? Future.succeededFuture(new SettingsSyncPage(List.of(), false))
        : repository.settingsPage(request.puller(), request.limit() + 1).map(items -> new SettingsSyncPage(
            items.subList(0, Math.min(items.size(), request.limit())), items.size() > request.limit())));
  }
}
