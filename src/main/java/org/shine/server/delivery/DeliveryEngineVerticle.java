package org.shine.server.delivery;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.EventBus;
import java.util.Objects;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;

/**
 * Wires the node's one {@link DeliveryEngine} to {@link Addresses#DELIVERY_ATTEMPT} and
 * {@link Addresses#DELIVERY_FORWARD}. Deployed as a single instance per node: every delivery instance and the retry
 * timer hand their attempts here.
 */
public final class DeliveryEngineVerticle extends VerticleBase {
  private final DeliveryServices services;

  public DeliveryEngineVerticle(DeliveryServices services) {
    this.services = Objects.requireNonNull(services);
  }

  @Override
  public Future<?> start() {
    DeliveryEngine engine = new DeliveryEngine(new DeliveryModule(vertx, services));
    EventBus bus = vertx.eventBus();
    return Future.all(
        BusReplies.serve(bus, Addresses.DELIVERY_ATTEMPT, engine::submit),
        bus.<ForwardRequest>localConsumer(Addresses.DELIVERY_FORWARD, m -> engine.forward(m.body())).completion());
  }
}
