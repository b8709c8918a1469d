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

  /**
   * A pair of {@code outgoing.from()} stored here (sent on one of its sessions, forwarded or synced from its sibling)
   * goes to the sender's sessions but {@code exceptSession} (null: every one), with the state it has now.
   */
  static void pushOutgoing(Vertx vertx, Frames frames, DmContainer outgoing, DeliveryState state,
      String exceptSession) {
    ObjectNode payload = frames.object()
        .put("messageKey", outgoing.messageKey())
        .put("baseKey", outgoing.baseKey())
        .put("blobB64", Base64.getEncoder().encodeToString(outgoing.bytes()))
        .put("deliveryState", state.wire());
    publish(vertx, frames, outgoing.from(), Ops.EVENT_OUTGOING_DIRECT_MESSAGE, payload,
        outgoing.messageKey() + "|r" + outgoing.revision(), exceptSession);
  }

  /** A receipt the reader sent (or its sibling stored) goes to the reader's sessions but {@code exceptSession}. */
  static void pushReadByMe(Vertx vertx, Frames frames, DmContainer receipt, String exceptSession) {
    ObjectNode payload = frames.object().put("baseKey", receipt.ref()).put("readAtMs", receipt.createdAtMs());
    publish(vertx, frames, receipt.from(), Ops.EVENT_READ_BY_ME, payload, receipt.messageKey(), exceptSession);
  }

  static void pushReadReceipt(Vertx vertx, Frames frames, String sender, DmContainer receipt) {
    ObjectNode payload = frames.object().put("baseKey", receipt.ref()).put("readerLogin", receipt.from())
        .put("readAtMs", receipt.createdAtMs());
    publish(vertx, frames, sender, Ops.EVENT_READ_RECEIPT, payload, receipt.messageKey());
  }

  private static void publish(Vertx vertx, Frames frames, String login, String op, ObjectNode payload,
      String key) {
    publish(vertx, frames, login, op, payload, key, null);
  }

  private static void publish(Vertx vertx, Frames frames, String login, String op, ObjectNode payload,
      String key, String exceptSession) {
    String eventKey = op + "|" + key;
    if (exceptSession == null) {
      vertx.eventBus().publish(Addresses.userEvents(login), frames.event(op, payload));
    } else {
      vertx.eventBus().publish(Addresses.userEvents(login), frames.event(op, payload),
          new DeliveryOptions().addHeader(Addresses.EXCEPT_SESSION_HEADER, exceptSession));
    }
    vertx.eventBus().send(Addresses.HUB_ENQUEUE, new HubEvent(login, eventKey, op, payload), LOCAL);
  }
}
