package org.shine.server.sync;

import io.vertx.core.Future;
import java.util.List;
import java.util.Objects;
import java.util.function.BiFunction;
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
    return page(request, repository::dmPage, DmSyncPage::new);
  }

  public Future<SettingsSyncPage> settingsBatch(SyncBatchRequest request) {
    return page(request, repository::settingsPage, SettingsSyncPage::new);
  }

  /** ACKs first, then one more item than asked for, to tell whether more wait. */
  private <I, P> Future<P> page(SyncBatchRequest request, BiFunction<String, Integer, Future<List<I>>> fetch,
      BiFunction<List<I>, Boolean, P> build) {
    return repository.ack(request.puller(), request.ackSyncIds()).compose(acked -> request.limit() == 0
        ? Future.succeededFuture(build.apply(List.of(), false))
        : fetch.apply(request.puller(), request.limit() + 1).map(items -> build.apply(
            items.subList(0, Math.min(items.size(), request.limit())), items.size() > request.limit())));
  }
}
