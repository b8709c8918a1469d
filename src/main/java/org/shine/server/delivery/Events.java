package org.shine.server.delivery;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import java.util.Base64;
import java.util.Objects;
import java.util.function.Supplier;
import org.shine.server.bus.Addresses;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKeys;
import org.shine.server.hub.HubSubscribers;
import org.shine.server.model.DeliveryState;
import org.shine.server.model.HubEntry;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.Ops;

/**
 * The events of PROTOCOL §5, each with a stable key for dedupe, in two halves. Before a write: the hub entry of the
 * event it may cause, for a user who polls ({@code null} for everyone else, who costs no encoding), which the write
 * stores in its own statement. After the commit, best-effort: the push to every live session of the user on any
 * node, and a wake-up of the user's waiting polls. A missed push is covered by history and the hub.
 *
 * <p>{@code OutgoingDirectMessage} and {@code DmReadByMe} tell a user's other sessions what one of them sent or read;
 * they are live-session events only, with no hub entry: what a user sent or read is in its history, and an
 * integration that polls the hub learns of its own sends from their answers (docs/protocol.md).
 */
final class Events {
  private final Vertx vertx;
  private final Frames frames;
  private final HubSubscribers subscribers;

  Events(Vertx vertx, Frames frames, HubSubscribers subscribers) {
    this.vertx = Objects.requireNonNull(vertx);
    this.frames = Objects.requireNonNull(frames);
    this.subscribers = Objects.requireNonNull(subscribers);
  }

  /** The hub entry of {@code IncomingDirectMessage} for {@code recipient}, or null. */
  HubEntry incomingEntry(String recipient, DmContainer incoming) {
    return entry(recipient, Ops.EVENT_INCOMING_DIRECT_MESSAGE, incomingKey(incoming), () -> incoming(incoming));
  }

  /** The hub entry of {@code DmDeliveryStateChanged} for {@code sender}, or null. */
  HubEntry stateChangedEntry(String sender, String baseKey, DeliveryState state) {
    return stateChangedEntry(sender, baseKey, state, null);
  }

  /** As above, with the error {@code code} that made the delivery fail (null: none given). */
  HubEntry stateChangedEntry(String sender, String baseKey, DeliveryState state, String code) {
    return entry(sender, Ops.EVENT_DELIVERY_STATE_CHANGED, stateKey(baseKey, state),
        () -> stateChanged(baseKey, state, code));
  }

  /** The hub entry of {@code DmReadReceipt} for {@code sender}, or null. */
  HubEntry readReceiptEntry(String sender, DmContainer receipt) {
    return entry(sender, Ops.EVENT_READ_RECEIPT, receipt.messageKey(), () -> readReceipt(receipt));
  }

  void pushIncoming(String recipient, DmContainer incoming) {
    push(recipient, Ops.EVENT_INCOMING_DIRECT_MESSAGE, incoming(incoming));
  }

  void pushStateChanged(String sender, String baseKey, DeliveryState state) {
    pushStateChanged(sender, baseKey, state, null);
  }

  /** As above, with the error {@code code} that made the delivery fail (e.g. {@code KEY_REVOKED}; null: none). */
  void pushStateChanged(String sender, String baseKey, DeliveryState state, String code) {
    push(sender, Ops.EVENT_DELIVERY_STATE_CHANGED, stateChanged(baseKey, state, code));
  }

  void pushReadReceipt(String sender, DmContainer receipt) {
    push(sender, Ops.EVENT_READ_RECEIPT, readReceipt(receipt));
  }

  /**
   * A pair of {@code outgoing.from()} stored here (sent on one of its sessions, forwarded or synced from its sibling)
   * goes to the sender's sessions but {@code exceptSession} (null: every one), with the state it has now.
   */
  void pushOutgoing(DmContainer outgoing, DeliveryState state, String exceptSession) {
    ObjectNode payload = frames.object()
        .put("messageKey", outgoing.messageKey())
        .put("baseKey", outgoing.baseKey())
        .put("blobB64", Base64.getEncoder().encodeToString(outgoing.bytes()))
        .put("deliveryState", state.wire());
    pushExcept(outgoing.from(), Ops.EVENT_OUTGOING_DIRECT_MESSAGE, payload, exceptSession);
  }

  /** A receipt the reader sent (or its sibling stored) goes to the reader's sessions but {@code exceptSession}. */
  void pushReadByMe(DmContainer receipt, String exceptSession) {
    ObjectNode payload = frames.object().put("baseKey", receipt.ref()).put("readAtMs", receipt.createdAtMs());
    pushExcept(receipt.from(), Ops.EVENT_READ_BY_ME, payload, exceptSession);
  }

  private ObjectNode incoming(DmContainer incoming) {
    return frames.object()
        .put("messageKey", incoming.messageKey())
        .put("baseKey", incoming.baseKey())
        .put("blobB64", Base64.getEncoder().encodeToString(incoming.bytes()));
  }

  private static String incomingKey(DmContainer incoming) {
    return incoming.messageKey() + "|r" + incoming.revision();
  }

  private ObjectNode stateChanged(String baseKey, DeliveryState state, String code) {
    ObjectNode payload = frames.object()
        .put("outgoingKey", DmKeys.outgoingKey(baseKey))
        .put("baseKey", baseKey)
        .put("deliveryState", state.wire());
    return code == null ? payload : payload.put("code", code);
  }

  private static String stateKey(String baseKey, DeliveryState state) {
    return DmKeys.outgoingKey(baseKey) + "|" + state.wire();
  }

  private ObjectNode readReceipt(DmContainer receipt) {
    // the signed receipt travels with the event, so that a client or the adapter can verify it (PROTOCOL §13)
    return frames.object().put("baseKey", receipt.ref()).put("readerLogin", receipt.from())
        .put("readAtMs", receipt.createdAtMs())
        .put("receiptBlobB64", Base64.getEncoder().encodeToString(receipt.bytes()));
  }

  private HubEntry entry(String login, String op, String key, Supplier<ObjectNode> payload) {
    if (!subscribers.mayPoll(login)) {
      return null;
    }
    String eventKey = op + "|" + key;
    return new HubEntry(login, eventKey, frames.hubEvent(op, payload.get(), eventKey));
  }

  private void pushExcept(String login, String op, ObjectNode payload, String exceptSession) {
    if (exceptSession == null) {
      vertx.eventBus().publish(Addresses.userEvents(login), frames.event(op, payload));
    } else {
      vertx.eventBus().publish(Addresses.userEvents(login), frames.event(op, payload),
          new DeliveryOptions().addHeader(Addresses.EXCEPT_SESSION_HEADER, exceptSession));
    }
  }

  private void push(String login, String op, ObjectNode payload) {
    vertx.eventBus().publish(Addresses.userEvents(login), frames.event(op, payload));
    if (subscribers.mayPoll(login)) {
      vertx.eventBus().publish(Addresses.hubWake(login), op);
    }
  }
}
