package org.shine.server.directory;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.MessageConsumer;
import java.time.Clock;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.bus.LocalRecordCodec;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.model.StoredUser;
import org.shine.server.util.Json;

/** Wires the directory: {@code directory.publish}, {@code directory.get} and {@code directory.reannounce}. */
public final class DirectoryVerticle extends VerticleBase {
  private final AppConfig config;
  private final Clock clock;
  private final SignatureVerifier verifier;

  public DirectoryVerticle(AppConfig config, Clock clock, SignatureVerifier verifier) {
    this.config = config;
    this.clock = clock;
    this.verifier = verifier;
  }

  @Override
  public Future<?> start() {
    LocalRecordCodec.register(vertx, PublishCardCommand.class, DirectoryService.PublishResult.class,
        StoredUser.class);
    DirectoryService directory = new DirectoryService(vertx, config, Database.sharedPool(vertx, config.db()),
        Json.MAPPER, clock, verifier);
    EventBus bus = vertx.eventBus();
    MessageConsumer<PublishCardCommand> publish = bus.localConsumer(Addresses.DIRECTORY_PUBLISH,
        message -> BusReplies.replyWith(message, directory.publish(message.body())));
    MessageConsumer<String> get = bus.localConsumer(Addresses.DIRECTORY_GET,
        message -> BusReplies.replyWith(message, directory.get(message.body())));
    MessageConsumer<String> reannounce = bus.localConsumer(Addresses.DIRECTORY_REANNOUNCE,
        message -> directory.reannounce(message.body()));
    return Future.all(publish.completion(), get.completion(), reannounce.completion());
  }
}
