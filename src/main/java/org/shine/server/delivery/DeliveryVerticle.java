package org.shine.server.delivery;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.sqlclient.Pool;
import java.time.Clock;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.DmRepository;
import org.shine.server.directory.DirectoryCache;
import org.shine.server.protocol.Frames;
import org.shine.server.util.Json;

/** Wires the message store and delivery: {@code dm.send-pair} and {@code dm.history}. */
public final class DeliveryVerticle extends VerticleBase {
  private static final long DIRECTORY_CACHE_TTL_MS = 30_000;
  private final AppConfig config;
  private final Clock clock;

  public DeliveryVerticle(AppConfig config, Clock clock) {
    this.config = config;
    this.clock = clock;
  }

  @Override
  public Future<?> start() {
    Pool pool = Database.sharedPool(vertx, config.db());
    DirectoryCache directory = new DirectoryCache(vertx, new DirectoryRepository(pool), DIRECTORY_CACHE_TTL_MS);
    DmRepository messages = new DmRepository(pool);
    SendPairService sendPair = new SendPairService(vertx, config, directory, messages, new Frames(Json.MAPPER),
        clock);
    EventBus bus = vertx.eventBus();
    MessageConsumer<SendPairCommand> send = bus.localConsumer(Addresses.DM_SEND_PAIR,
        message -> BusReplies.replyWith(message, sendPair.send(message.body())));
    MessageConsumer<HistoryQuery> history = bus.localConsumer(Addresses.DM_HISTORY,
        message -> BusReplies.replyWith(message, messages.history(message.body()).map(HistoryPage::new)));
    return Future.all(directory.start(), send.completion(), history.completion());
  }
}
