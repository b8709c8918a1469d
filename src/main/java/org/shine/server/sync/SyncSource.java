package org.shine.server.sync;

import io.vertx.core.Future;
import java.util.List;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.ToLongFunction;
import org.shine.server.db.SyncRepository;
import org.shine.server.db.SyncRepository.DmItem;
import org.shine.server.db.SyncRepository.Lane;
import org.shine.server.db.SyncRepository.SettingItem;

/**
 * The source side of DmSyncBatch and UserSettingsSyncBatch (PROTOCOL §8): take the ACKs of the previous page (of the
 * op's own lane of the puller's queue), then hand out the oldest items owed to the puller after the request's
 * {@code afterSyncId} (v3: so a puller walks past items it cannot store yet). An item whose ACK is lost stays owed
 * and comes again. A page also ends early, with {@code hasMore}, before its response would pass
 * {@code limits.maxResponseBytes} (it always carries at least one item), so no frame is larger than a peer accepts.
 */
public final class SyncSource {
  /** Room kept for the envelope and the page's own fields. */
  private static final int ENVELOPE_BYTES = 1024;
  /** JSON field names and punctuation of one item, beside its variable parts. */
  private static final int ITEM_OVERHEAD_BYTES = 96;
  private final SyncRepository repository;
  private final long maxPageBytes;

  public SyncSource(SyncRepository repository, int maxResponseBytes) {
    this.repository = Objects.requireNonNull(repository);
    this.maxPageBytes = maxResponseBytes - ENVELOPE_BYTES;
  }

  public Future<DmSyncPage> dmBatch(SyncBatchRequest request) {
    return page(request, Lane.DM, repository::dmPage, SyncSource::renderedSize, DmSyncPage::new);
  }

  public Future<SettingsSyncPage> settingsBatch(SyncBatchRequest request) {
    return page(request, Lane.SETTINGS, repository::settingsPage, SyncSource::renderedSize, SettingsSyncPage::new);
  }

  /** ACKs first, then one more item than asked for, to tell whether more wait; then the byte cap. */
  private <I, P> Future<P> page(SyncBatchRequest request, Lane lane, PageFetch<I> fetch,
      ToLongFunction<I> size, BiFunction<List<I>, Boolean, P> build) {
    return repository.ack(request.puller(), lane, request.ackSyncIds()).compose(acked -> request.limit() == 0
        ? Future.succeededFuture(build.apply(List.of(), false))
        : fetch.fetch(request.puller(), request.afterSyncId(), request.limit() + 1).map(items -> {
          int fits = Math.min(items.size(), request.limit());
          long bytes = 0;
          for (int i = 0; i < fits; i++) {
            bytes += size.applyAsLong(items.get(i));
            if (bytes > maxPageBytes && i > 0) {
              fits = i;
              break;
            }
          }
          return build.apply(items.subList(0, fits), items.size() > fits);
        }));
  }

  /** One page of the outbox: the puller's items after a syncId, at most {@code limit}. */
  @FunctionalInterface
  private interface PageFetch<I> {
    Future<List<I>> fetch(String puller, long afterSyncId, int limit);
  }

  /** An upper bound of the item's JSON: base64 blobs, owner and type (PROTOCOL §8 page format). */
  static long renderedSize(DmItem item) {
    return base64Length(item.blob()) + (item.pairBlob() == null ? 0 : base64Length(item.pairBlob()))
        + item.owner().length() + ITEM_OVERHEAD_BYTES;
  }

  /**
   * An upper bound of the item's JSON in UTF-8: up to 3 bytes a char of the value (already JSON text) and the owner,
   * up to 6 of the key (an escaped control character).
   */
  static long renderedSize(SettingItem item) {
    return 3L * (item.valueJson().length() + item.owner().length()) + 6L * item.key().length()
        + ITEM_OVERHEAD_BYTES;
  }

  private static long base64Length(byte[] bytes) {
    return (bytes.length + 2L) / 3 * 4;
  }
}
