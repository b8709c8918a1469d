package org.shine.server.delivery;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.time.Clock;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DeliveryRepository;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.DmRepository;
import org.shine.server.db.SignalRepository;
import org.shine.server.directory.DirectoryCache;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.hub.HubSubscribers;
import org.shine.server.model.DeliverySchedule;
import org.shine.server.peer.PeerCalls;
import org.shine.server.protocol.Frames;
import org.shine.server.util.Json;

/**
 * The request path one delivery instance owns (parse, check, verify, store; all confined to its event loop); its
 * attempts go to the node's one {@link DeliveryEngine} through {@link EngineClient}.
 */
final class DeliveryModule {
  static final long DIRECTORY_TTL_MS = 30_000;
  final DirectoryCache directory;
  final DmRepository messages;
  final DeliveryRepository deliveries;
  final CopyStore copies;
  final EngineClient engine;
  final PeerCalls peers;
  final Frames frames;
  final PairIntake intake;
  final SignalStore signals;
  final Events events;
  final ClockSkew skew;
  final DeliverySchedule schedule;

  DeliveryModule(Vertx vertx, AppConfig config, Pool pool, Clock clock, SignatureVerifier verifier,
      AttemptSlots slots, HubSubscribers subscribers) {
    this.frames = new Frames(Json.MAPPER);
    this.events = new Events(vertx, frames, subscribers);
    this.skew = new ClockSkew(clock, config.delivery().maxClockSkewMs());
    this.schedule = new DeliverySchedule(config.delivery().scheduleMs(), config.delivery().askSiblingFromAttempt());
    this.directory = new DirectoryCache(vertx, new DirectoryRepository(pool), DIRECTORY_TTL_MS);
    this.messages = new DmRepository(pool);
    this.deliveries = new DeliveryRepository(pool);
    this.copies = new CopyStore(messages, clock, verifier, config.delivery().queueCapacity());
    this.peers = new PeerCalls(vertx.eventBus(), config.delivery().callTimeoutMs());
    this.signals = new SignalStore(new SignalRepository(pool), events, clock, verifier);
    this.engine = new EngineClient(vertx.eventBus(), slots, config.delivery());
    this.intake = new PairIntake(config, directory::require, copies, engine, clock, events, skew,
        new AgePlan(schedule, deliveries, peers, frames, clock));
  }

  Future<Void> start() {
    return directory.start();
  }
}
