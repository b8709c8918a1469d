package org.shine.server.directory;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import java.util.Objects;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.util.Json;

/** Wires the directory: {@code directory.publish}, {@code directory.get}, {@code directory.chain} and {@code directory.reannounce}. */
public final class DirectoryVerticle extends VerticleBase {
  private final DirectoryServices services;

  public DirectoryVerticle(DirectoryServices services) {
    this.services = Objects.requireNonNull(services);
  }

  @Override
  public Future<?> start() {
    DirectoryService directory = new DirectoryService(vertx, services, Json.MAPPER);
    EventBus bus = vertx.eventBus();
    return Future.all(
        BusReplies.serve(bus, Addresses.DIRECTORY_PUBLISH, directory::publish),
        BusReplies.serve(bus, Addresses.DIRECTORY_GET, directory::get),
        BusReplies.serve(bus, Addresses.DIRECTORY_CHAIN, directory::chain),
        bus.<String>localConsumer(Addresses.DIRECTORY_REANNOUNCE, m -> directory.reannounce(m.body())).completion());
  }
}
