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
import org.shine.server.peer.PeerCalls;
import org.shine.server.protocol.Frames;
import org.shine.server.util.Json;

/** The delivery machinery one verticle instance owns (all confined to its event loop). */
public final class DeliveryModule {
  private static final long DIRECTORY_CACHE_TTL_MS = 30_000;
  final DirectoryCache directory;
  final DmRepository messages;
  final DeliveryRepository deliveries;
  final CopyStore copies;
  final DeliveryAttempts attempts;
  final PeerCalls peers;
  final Frames frames;
  final PairIntake intake;
  final SignalStore signals;
  final ClockSkew skew;

  public DeliveryModule(Vertx vertx, AppConfig config, Pool pool, Clock clock, SignatureVerifier verifier) {
    this.frames = new Frames(Json.MAPPER);
    this.skew = new ClockSkew(clock, config.delivery().maxClockSkewMs());
    this.directory = new DirectoryCache(vertx, new DirectoryRepository(pool), DIRECTORY_CACHE_TTL_MS);
    this.messages = new DmRepository(pool);
    this.deliveries = new DeliveryRepository(pool);
    this.copies = new CopyStore(messages, clock, verifier, config.delivery().queueCapacity());
    this.peers = new PeerCalls(vertx.eventBus(), config.delivery().callTimeoutMs());
    this.signals = new SignalStore(vertx, new SignalRepository(pool), frames, clock, verifier);
    this.attempts = new DeliveryAttempts(vertx, config, directory, deliveries, copies, signals, peers, frames, clock);
    this.intake = new PairIntake(config, directory, copies, attempts, clock);
  }

  public Future<Void> start() {
    return directory.start();
  }

  public DeliveryAttempts attempts() {
    return attempts;
  }

  public DeliveryRepository deliveries() {
    return deliveries;
  }
}
