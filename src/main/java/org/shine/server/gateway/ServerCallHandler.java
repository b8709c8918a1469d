package org.shine.server.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import java.util.Objects;
import java.util.Set;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.delivery.DeliveryStatus;
import org.shine.server.delivery.ReceiveIncomingCommand;
import org.shine.server.delivery.ReceiveOutgoingCommand;
import org.shine.server.delivery.SendPairResult;
import org.shine.server.dm.DmCodec;
import org.shine.server.protocol.Fields;
import org.shine.server.protocol.Frames;

/**
 * The open server-to-server ops (PROTOCOL §6, §6a): ReceiveIncomingMessage, ReceiveOutcomingMessage and
 * GetDmDeliveryStatus. Any session may call them; the session decides whether {@code sourceServerLogin} is
 * trusted ({@link ServerTrust}) and which rate limits of PROTOCOL §13 apply ({@link OpLimits}).
 */
final class ServerCallHandler {
  private final EventBus bus;
  private final Frames frames;
  private final ServerTrust trust;
  private final OpLimits limits;

  ServerCallHandler(EventBus bus, Frames frames, ServerTrust trust, OpLimits limits) {
    this.bus = Objects.requireNonNull(bus);
    this.frames = Objects.requireNonNull(frames);
    this.trust = Objects.requireNonNull(trust);
    this.limits = Objects.requireNonNull(limits);
  }

  Future<JsonNode> receiveIncomingMessage(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("incomingBlobB64", "sourceServerLogin"));
    byte[] incoming = Containers.field(fields, "incomingBlobB64");
    String source = trust.trustedSource(session, fields);
    admit(session, incoming);
    return BusReplies.<String>request(bus, Addresses.DM_RECEIVE_INCOMING, new ReceiveIncomingCommand(incoming, source))
        .map(messageKey -> frames.object().put("messageKey", messageKey));
  }

  Future<JsonNode> receiveOutcomingMessage(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("incomingBlobB64", "outgoingBlobB64", "sourceServerLogin"));
    byte[] incoming = Containers.field(fields, "incomingBlobB64");
    byte[] outgoing = Containers.field(fields, "outgoingBlobB64");
    String source = trust.trustedSource(session, fields);
    admit(session, incoming);
    return BusReplies.<SendPairResult>request(bus, Addresses.DM_RECEIVE_OUTGOING,
            new ReceiveOutgoingCommand(incoming, outgoing, source))
        .map(result -> frames.object().put("incomingKey", result.incomingKey())
            .put("outgoingKey", result.outgoingKey()));
  }

  /**
   * The §13 limits of a Receive* call, before its containers go to delivery (where they are verified): the open-op
   * limits on any session but a server's, and the recipient's inbound limit on every session. The incoming copy
   * names both the author and the recipient (a pair's two copies must agree on them, else delivery refuses it).
   */
  private void admit(Session session, byte[] incoming) {
    DmCodec.Parties parties = DmCodec.peekParties(incoming);
    if (!session.serverAuthenticated()) {
      limits.admitOpenOp(session.host(), parties == null ? null : parties.from());
    }
    if (parties != null) {
      limits.admitInbound(parties.to());
    }
  }

  Future<JsonNode> getDmDeliveryStatus(Session session, JsonNode payload) {
    String messageKey = Fields.of(payload, "payload", Set.of("messageKey")).requiredString("messageKey");
    return BusReplies.<DeliveryStatus>request(bus, Addresses.DM_STATUS, messageKey)
        .map(status -> {
          ObjectNode answer = frames.object().put("messageKey", status.messageKey()).put("known", status.known())
              .put("delivered", status.delivered());
          // v2 (PROTOCOL §6): tells "still trying" from "failed"; an old caller ignores it
          return status.state() == null ? answer : answer.put("state", status.state().wire());
        });
  }
}
