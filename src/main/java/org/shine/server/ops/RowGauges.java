package org.shine.server.ops;

import io.vertx.core.Future;
import java.time.Clock;
import java.util.Objects;
import org.shine.server.db.OpsRepository;
import org.shine.server.metrics.ShineMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples the gauges of row counts (PROTOCOL §12: {@code shine_delivery_due}, {@code shine_delivery_accepted},
 * {@code shine_sync_lag_items}, {@code shine_hub_queue_depth}) from three statements on partial indexes, on a
 * timer rather than per scrape, so a scrape never costs a query. A sample that finds the previous one still
 * running skips. Confined to one event loop.
 */
public final class RowGauges {
  private static final Logger LOG = LoggerFactory.getLogger(RowGauges.class);
  private final OpsRepository repository;
  private final ShineMetrics metrics;
  private final String serverLogin;
  private final Clock clock;
  private Future<Void> current = Future.succeededFuture();

  public RowGauges(OpsRepository repository, ShineMetrics metrics, String serverLogin, Clock clock) {
    this.repository = Objects.requireNonNull(repository);
    this.metrics = Objects.requireNonNull(metrics);
    this.serverLogin = Objects.requireNonNull(serverLogin);
    this.clock = Objects.requireNonNull(clock);
  }

  /** One sample of every gauge; the gauges keep their last values when a statement fails. */
  public Future<Void> sample() {
    if (!current.isComplete()) {
      return current;
    }
    current = Future.join(
            repository.deliveryCounts(clock.millis())
                .onSuccess(counts -> metrics.deliveryRows(counts.due(), counts.accepted())),
            repository.hubQueueDepth().onSuccess(metrics::hubQueueDepth),
            repository.syncLag(serverLogin).onSuccess(metrics::syncLag))
        .onFailure(failure -> LOG.warn("gauge sample failed: {}", failure.toString()))
        .<Void>mapEmpty()
        .otherwiseEmpty();
    return current;
  }
}
