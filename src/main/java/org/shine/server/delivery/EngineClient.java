package org.shine.server.delivery;

import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.Objects;
import org.shine.server.bus.Addresses;
import org.shine.server.config.AppConfig;
import org.shine.server.model.DeliveryState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a producer of attempts (a delivery instance, the retry timer) uses the node's {@link DeliveryEngine}: it
 * reserves a place of the node's {@link AttemptSlots} before it stores or claims a row, then hands the attempt over
 * the local bus; the engine gives the place back once the attempt is recorded. An answer that does not come in
 * time reads as {@code accepted}: the row is stored and the engine (or later the retry worker) still delivers it.
 * One per node, shared by every producer on any event loop: it holds the event bus, the thread-safe slots and send
 * options it only reads.
 */
public final class EngineClient {
  private static final Logger LOG = LoggerFactory.getLogger(EngineClient.class);
  private final EventBus bus;
  private final AttemptSlots slots;
  private final DeliveryOptions options;

  /** Beyond the attempt itself: time for an attempt to wait in the engine's queue before the answer says accepted. */
  private static final long QUEUE_SLACK_MS = 10_000;

  /** An attempt may ask the sibling, then call the routes, then record: three call timeouts, plus the queue. */
  public EngineClient(EventBus bus, AttemptSlots slots, AppConfig.Delivery delivery) {
    this.bus = Objects.requireNonNull(bus);
    this.slots = Objects.requireNonNull(slots);
    this.options = new DeliveryOptions().setLocalOnly(true)
        .setSendTimeout(3 * delivery.callTimeoutMs() + QUEUE_SLACK_MS);
  }

  /** Takes a place for an attempt about to be handed over; false when the node's engine is full. */
  public boolean reserve() {
    return slots.reserve();
  }

  /** Gives back a reservation that will not be used. */
  public void release() {
    slots.release();
  }

  /** Places free now. */
  public int free() {
    return slots.free();
  }

  /** Hands a reserved attempt to the engine; completes with the state it recorded (or {@code accepted}). */
  public Future<DeliveryState> submitReserved(AttemptRequest request) {
    return bus.<DeliveryState>request(Addresses.DELIVERY_ATTEMPT, request, options).map(Message::body)
        .recover(failure -> {
          if (failure instanceof ReplyException reply && reply.failureType() == ReplyFailure.NO_HANDLERS) {
            // never reached the engine (node stopping): the place is ours to give back
            slots.release();
          }
          LOG.debug("no attempt result in time [outgoingKey: {}]: {}", request.task().statusKey(),
              failure.getMessage());
          return Future.succeededFuture(DeliveryState.ACCEPTED);
        });
  }

  /** Asks the engine to forward a pair that needs no attempt here to its sender's sibling. */
  public void forward(ForwardRequest pair) {
    bus.send(Addresses.DELIVERY_FORWARD, pair, new DeliveryOptions().setLocalOnly(true));
  }
}
