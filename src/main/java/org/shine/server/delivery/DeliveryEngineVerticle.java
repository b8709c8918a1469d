package org.shine.server.delivery;

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
import org.shine.server.db.DeliveryRepository;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.DmRepository;
import org.shine.server.db.SignalRepository;
import org.shine.server.db.SyncRepository;
import org.shine.server.directory.DirectoryCache;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.hub.HubSubscribers;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.model.DeliveryState;
import org.shine.server.peer.PeerCalls;
import org.shine.server.protocol.Frames;
import org.shine.server.util.Json;

/**
 * Wires the node's one {@link DeliveryEngine} to {@link Addresses#DELIVERY_ATTEMPT} and
 * {@link Addresses#DELIVERY_FORWARD}. Deployed as a single
 * instance per node: every delivery instance and the retry timer hand their attempts here.
 */
public final class DeliveryEngineVerticle extends VerticleBase {
  private final AppConfig config;
  private final Clock clock;
  private final SignatureVerifier verifier;
  private final AttemptSlots slots;
  private final HubSubscribers subscribers;
  private final ShineMetrics metrics;

  public DeliveryEngineVerticle(AppConfig config, Clock clock, SignatureVerifier verifier, AttemptSlots slots,
      HubSubscribers subscribers, ShineMetrics metrics) {
    this.subscribers = Objects.requireNonNull(subscribers);
    this.config = Objects.requireNonNull(config);
    this.clock = Objects.requireNonNull(clock);
    this.verifier = Objects.requireNonNull(verifier);
    this.slots = Objects.requireNonNull(slots);
    this.metrics = Objects.requireNonNull(metrics);
  }

  @Override
  public Future<?> start() {
    LocalRecordCodec.register(vertx, AttemptRequest.class, ForwardRequest.class, DeliveryState.class);
    Pool pool = Database.sharedPool(vertx, config.db());
    Frames frames = new Frames(Json.MAPPER);
    DirectoryCache directory = new DirectoryCache(vertx, new DirectoryRepository(pool),
        DeliveryModule.DIRECTORY_TTL_MS);
    CopyStore copies = new CopyStore(new DmRepository(pool), clock, verifier, config.delivery().queueCapacity());
    Events events = new Events(vertx, frames, subscribers);
    SignalStore signals = new SignalStore(new SignalRepository(pool), events, clock, verifier);
    DeliveryEngine engine = new DeliveryEngine(config, directory, new DeliveryRepository(pool),
        new SyncRepository(pool, config.serverLogin()), copies, signals,
        new PeerCalls(vertx.eventBus(), config.delivery().callTimeoutMs()), frames, events, clock, slots, metrics);
    EventBus bus = vertx.eventBus();
    return Future.all(List.of(
        directory.start(),
        bus.<AttemptRequest>localConsumer(Addresses.DELIVERY_ATTEMPT,
            m -> BusReplies.replyWith(m, engine.submit(m.body()))).completion(),
        bus.<ForwardRequest>localConsumer(Addresses.DELIVERY_FORWARD, m -> engine.forward(m.body())).completion()));
  }
}
