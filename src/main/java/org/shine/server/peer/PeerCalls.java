package org.shine.server.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import java.util.Objects;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.protocol.ProtocolException;

/**
 * Calls other servers through the node's {@link PeerVerticle}; failures arrive as {@link ProtocolException}. One per
 * node, shared by verticles on several event loops: it holds only the event bus and a timeout.
 */
public final class PeerCalls {
  private static final long BUS_MARGIN_MS = 2_000;
  private final EventBus bus;
  private final long timeoutMs;

  public PeerCalls(EventBus bus, long timeoutMs) {
    this.bus = Objects.requireNonNull(bus);
    this.timeoutMs = timeoutMs;
  }

  /** The payload of the peer's 200 response. */
  public Future<JsonNode> call(String url, String op, ObjectNode payload) {
    return call(url, op, payload, false);
  }

  /** As {@link #call(String, String, ObjectNode)} for an op the peer serves only on a server session. */
  public Future<JsonNode> callInSession(String url, String op, ObjectNode payload) {
    return call(url, op, payload, true);
  }

  private Future<JsonNode> call(String url, String op, ObjectNode payload, boolean needsSession) {
    return BusReplies.<PeerResponse>request(bus, Addresses.PEER_REQUEST,
        new PeerRequest(url, op, payload, timeoutMs, needsSession), timeoutMs + BUS_MARGIN_MS)
        .map(PeerResponse::payload);
  }
}
