package org.shine.server.peer;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import java.util.HashMap;
import java.util.Map;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.config.AppConfig;

/**
 * Owns this node's connections to other servers: one per URL, shared by every verticle through
 * {@link Addresses#PEER_REQUEST}. Connections to configured peers are kept open; others open on first use.
 * On every (re)connection it publishes {@link Addresses#PEER_CONNECTED} (sync pulls) and asks the directory to
 * re-announce the cards of the users served here ({@link Addresses#DIRECTORY_REANNOUNCE}).
 */
public final class PeerVerticle extends VerticleBase {
  private static final int MAX_MESSAGE_BYTES = 4 << 20;
  private static final DeliveryOptions LOCAL = new DeliveryOptions().setLocalOnly(true);
  private final AppConfig config;
  private final Map<String, PeerConnection> connections = new HashMap<>();
  private WebSocketClient client;

  public PeerVerticle(AppConfig config) {
    this.config = config;
  }

  @Override
  public Future<?> start() {
    client = vertx.createWebSocketClient(new WebSocketClientOptions()
        .setMaxFrameSize(MAX_MESSAGE_BYTES)
        .setMaxMessageSize(MAX_MESSAGE_BYTES)
        .setMaxConnections(Math.max(64, config.peers().size() * 2)));
    for (AppConfig.Peer peer : config.peers()) {
      if (!peer.url().equals(config.publicUrl())) {
        connections.put(peer.url(), newConnection(peer.url(), true));
      }
    }
    MessageConsumer<PeerRequest> requests = vertx.eventBus().localConsumer(Addresses.PEER_REQUEST,
        message -> BusReplies.replyWith(message, call(message.body())));
    return requests.completion();
  }

  @Override
  public Future<?> stop() {
    connections.values().forEach(PeerConnection::close);
    return client.close();
  }

  private Future<PeerResponse> call(PeerRequest request) {
    PeerConnection connection = connections.computeIfAbsent(request.url(), url -> newConnection(url, false));
    return connection.call(request.op(), request.payload(), request.timeoutMs()).map(PeerResponse::new);
  }

  private PeerConnection newConnection(String url, boolean persistent) {
    // a peer applies its per-connection limit to us too; assume it is the same as ours
    return new PeerConnection(vertx, client, url, config.delivery().callTimeoutMs(),
        config.limits().maxInFlightPerConnection(), persistent,
        connected -> {
          vertx.eventBus().publish(Addresses.PEER_CONNECTED, connected, LOCAL);
          vertx.eventBus().send(Addresses.DIRECTORY_REANNOUNCE, connected, LOCAL);
        });
  }
}
