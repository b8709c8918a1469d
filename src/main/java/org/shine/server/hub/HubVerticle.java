package org.shine.server.hub;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.time.Clock;
import java.util.Objects;
import org.shine.server.bus.Addresses;
import org.shine.server.config.AppConfig;
import org.shine.server.db.HubRepository;
import org.shine.server.db.StorageErrors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the node's {@link HubSubscribers} (loaded at start, then every {@code hub.subscribed} from any node) and
 * drops what is older than {@code hub.retentionS} (7 days by default), hourly. Entries are queued by the writes that
 * cause them, in the same statement; the HTTP routes are served by the gateway on the same port ({@link HubRoutes}).
 */
public final class HubVerticle extends VerticleBase {
  private static final long CLEANUP_PERIOD_MS = 3600_000;
  private static final Logger LOG = LoggerFactory.getLogger(HubVerticle.class);
  private final AppConfig config;
  private final Clock clock;
  private final HubSubscribers subscribers;
  private final HubRepository hub;
  private long timer = -1;

  public HubVerticle(AppConfig config, Clock clock, HubSubscribers subscribers, HubRepository hub) {
    this.config = Objects.requireNonNull(config);
    this.clock = Objects.requireNonNull(clock);
    this.subscribers = Objects.requireNonNull(subscribers);
    this.hub = Objects.requireNonNull(hub);
  }

  @Override
  public Future<?> start() {
    long retentionMs = config.hub().retentionS() * 1000;
    timer = vertx.setPeriodic(CLEANUP_PERIOD_MS, id -> hub.expire(clock.millis() - retentionMs, clock.millis())
        .onFailure(failure -> {
          if (StorageErrors.isUnavailable(failure)) {
            LOG.debug("hub cleanup failed: {}", failure.toString());
          } else {
            LOG.warn("hub cleanup failed: {}", failure.toString());
          }
        }));
    // listen first, then load: a subscription made meanwhile is in one or the other
    return vertx.eventBus().<String>consumer(Addresses.HUB_SUBSCRIBED, m -> subscribers.add(m.body())).completion()
        .compose(v -> hub.subscribers())
        .onSuccess(subscribers::load);
  }

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(timer);
    return Future.succeededFuture();
  }
}
