package org.shine.server.delivery;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import java.util.Base64;
import org.shine.server.bus.Addresses;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKeys;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.Ops;

/** Publishes the events of PROTOCOL §5 to every live session of a user, on any node. */
final class Events {
  private Events() {
  }

  static void pushIncoming(Vertx vertx, Frames frames, String recipient, DmContainer incoming) {
    ObjectNode payload = frames.object()
        .put("messageKey", incoming.messageKey())
        .put("baseKey", incoming.baseKey())
        .put("blobB64", Base64.getEncoder().encodeToString(incoming.bytes()));
    vertx.eventBus().publish(Addresses.userEvents(recipient),
        frames.event(Ops.EVENT_INCOMING_DIRECT_MESSAGE, payload));
  }

  static void pushStateChanged(Vertx vertx, Frames frames, String sender, String baseKey, DeliveryState state) {
    ObjectNode payload = frames.object()
        .put("outgoingKey", DmKeys.outgoingKey(baseKey))
        .put("baseKey", baseKey)
        .put("deliveryState", state.wire());
    vertx.eventBus().publish(Addresses.userEvents(sender), frames.event(Ops.EVENT_DELIVERY_STATE_CHANGED, payload));
  }
}
