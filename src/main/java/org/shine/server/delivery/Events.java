package org.shine.server.delivery;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import java.util.Base64;
import org.shine.server.bus.Addresses;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKeys;
import org.shine.server.hub.HubEvent;
import org.shine.server.model.DeliveryState;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.Ops;

/**
 * Publishes the events of PROTOCOL §5 to every live session of a user, on any node, and hands each to the hub
 * verticle, which queues it durably for users who poll over HTTP (and only then builds its body). Each event has a stable key for dedupe.
 */
final class Events {
  private static final DeliveryOptions LOCAL = new DeliveryOptions().setLocalOnly(true);

  private Events() {
  }

  static void pushIncoming(Vertx vertx, Frames frames, String recipient, DmContainer incoming) {
    ObjectNode payload = frames.object()
        .put("messageKey", incoming.messageKey())
        .put("baseKey", incoming.baseKey())
        .put("blobB64", Base64.getEncoder().encodeToString(incoming.bytes()));
    publish(vertx, frames, recipient, Ops.EVENT_INCOMING_DIRECT_MESSAGE, payload,
        incoming.messageKey() + "|r" + incoming.revision());
  }

  static void pushStateChanged(Vertx vertx, Frames frames, String sender, String baseKey, DeliveryState state) {
    ObjectNode payload = frames.object()
        .put("outgoingKey", DmKeys.outgoingKey(baseKey))
        .put("baseKey", baseKey)
        .put("deliveryState", state.wire());
    publish(vertx, frames, sender, Ops.EVENT_DELIVERY_STATE_CHANGED, payload,
        DmKeys.outgoingKey(baseKey) + "|" + state.wire());
  }

  static void pushReadReceipt(Vertx vertx, Frames frames, String sender, DmContainer receipt) {
    ObjectNode payload = frames.object().put("baseKey", receipt.ref()).put("readerLogin", receipt.from())
        .put("readAtMs", receipt.createdAtMs());
    publish(vertx, frames, sender, Ops.EVENT_READ_RECEIPT, payload, receipt.messageKey());
  }

  private static void publish(Vertx vertx, Frames frames, String login, String op, ObjectNode payload,
      String key) {
    String eventKey = op + "|" + key;
    vertx.eventBus().publish(Addresses.userEvents(login), frames.event(op, payload));
    vertx.eventBus().send(Addresses.HUB_ENQUEUE, new HubEvent(login, eventKey, op, payload), LOCAL);
  }
}
