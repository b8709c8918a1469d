package org.shine.server.hub;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import java.time.Clock;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.LocalRecordCodec;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.db.HubRepository;
import org.shine.server.db.StorageErrors;
import org.shine.server.protocol.Frames;
import org.shine.server.util.Json;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns the durable hub queue: queues the events of users who poll ({@code hub.enqueue}), wakes their waiting
 * polls on any node ({@code hub.wake.<login>}), and drops what is older than {@code hub.retentionS} (7 days by default), hourly. The HTTP routes are
 * served by the gateway on the same port ({@link HubRoutes}).
 */
public final class HubVerticle extends VerticleBase {
  private static final long CLEANUP_PERIOD_MS = 3600_000;
  private static final Logger LOG = LoggerFactory.getLogger(HubVerticle.class);
  private final AppConfig config;
  private final Clock clock;
  private final Set<String> subscribers = new HashSet<>();
  private final Frames frames = new Frames(Json.MAPPER);
  private final Map<String, Future<?>> tails = new HashMap<>();
  private long timer = -1;

  public HubVerticle(AppConfig config, Clock clock) {
    this.config = config;
    this.clock = clock;
  }

  @Override
  public Future<?> start() {
    LocalRecordCodec.register(vertx, HubEvent.class);
    HubRepository hub = new HubRepository(Database.sharedPool(vertx, config.db()));
    EventBus bus = vertx.eventBus();
    long retentionMs = config.hub().retentionS() * 1000;
    timer = vertx.setPeriodic(CLEANUP_PERIOD_MS, id -> hub.expire(clock.millis() - retentionMs, clock.millis())
        .onFailure(failure -> {
          if (StorageErrors.isUnavailable(failure)) {
            LOG.debug("hub cleanup failed: {}", failure.toString());
          } else {
            LOG.warn("hub cleanup failed: {}", failure.toString());
          }
        }));
    return hub.subscribers().compose(logins -> {
      subscribers.addAll(logins);
      return Future.all(List.of(
          bus.<String>consumer(Addresses.HUB_SUBSCRIBED, m -> subscribers.add(m.body())).completion(),
          bus.<HubEvent>localConsumer(Addresses.HUB_ENQUEUE, m -> enqueue(hub, m.body())).completion()));
    });
  }

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(timer);
    return Future.succeededFuture();
  }

  /**
   * Queues one event of a user who polls. A user's events are inserted one after another, in the order they
   * arrived here, so their delivery ids (the order the hub hands them out in) follow that order.
   */
  private void enqueue(HubRepository hub, HubEvent event) {
    if (!subscribers.contains(event.login())) {
      return;
    }
    String login = event.login();
    String body = frames.hubEvent(event.op(), event.payload(), event.eventKey());
    Future<?> previous = tails.getOrDefault(login, Future.succeededFuture());
    Future<Boolean> queued = previous.eventually(() -> Future.succeededFuture())
        .compose(v -> hub.enqueue(login, event.eventKey(), body, clock.millis()))
        .onSuccess(isNew -> {
          if (isNew) {
            vertx.eventBus().publish(Addresses.hubWake(login), event.eventKey());
          }
        })
        .onFailure(failure -> LOG.warn("hub event not queued [login: {}, eventKey: {}]: {}", login,
            event.eventKey(), failure.toString()));
    tails.put(login, queued);
    // at most one tail per user with events in flight: the last one removes itself
    queued.onComplete(ar -> tails.remove(login, queued));
  }
}
