package org.shine.server.sync;

import io.vertx.core.Future;
import java.time.Clock;
import java.util.Objects;
import org.shine.server.db.QuarantineRepository;
import org.shine.server.metrics.QuarantineReason;
import org.shine.server.metrics.ShineMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts pulled items that can never be stored as they are into {@code sync_quarantine} (PROTOCOL §8 v3), counts
 * them ({@code shine_sync_quarantined_total{reason}}) and logs one line each; the puller then ACKs them. An item
 * kept longer than {@value #MAX_ITEM_CHARS} characters of JSON is cut short and marked truncated (no container or
 * setting is that large, so it was malformed anyway).
 */
final class Quarantine {
  static final int MAX_ITEM_CHARS = 262_144;
  private static final int MAX_DETAIL_CHARS = 1_000;
  private static final Logger LOG = LoggerFactory.getLogger(Quarantine.class);
  private final QuarantineRepository repository;
  private final ShineMetrics metrics;
  private final Clock clock;

  Quarantine(QuarantineRepository repository, ShineMetrics metrics, Clock clock) {
    this.repository = Objects.requireNonNull(repository);
    this.metrics = Objects.requireNonNull(metrics);
    this.clock = Objects.requireNonNull(clock);
  }

  /** Quarantines {@code item} ({@code author}: its containers' author, null when they did not parse). */
  Future<ItemResult> put(PulledItem item, String author, QuarantineReason reason, String detail) {
    String json = item.json().toString();
    boolean truncated = json.length() > MAX_ITEM_CHARS;
    String text = detail == null ? "" : detail.length() > MAX_DETAIL_CHARS ? detail.substring(0, MAX_DETAIL_CHARS)
        : detail;
    QuarantineRepository.Entry entry = new QuarantineRepository.Entry(0, item.owner(), author,
        item.source().serverLogin(), item.source().url(), item.op(), item.type(), item.syncId(), reason.tag(), text,
        truncated ? json.substring(0, MAX_ITEM_CHARS) : json, truncated, clock.millis(), clock.millis());
    return repository.put(entry).map(added -> {
      if (added) {
        metrics.quarantined(reason);
        LOG.warn("synced item quarantined [reason: {}, owner: {}, author: {}, sibling: {}, op: {}, syncId: {}]: {}",
            reason.tag(), item.owner(), author, item.source().serverLogin(), item.op(), item.syncId(),
            text.replaceAll("\\p{Cntrl}", "?"));
      }
      return new ItemResult(item.syncId(), ItemResult.Fate.QUARANTINED);
    });
  }
}
