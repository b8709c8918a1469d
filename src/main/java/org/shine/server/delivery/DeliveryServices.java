package org.shine.server.delivery;

import java.time.Clock;
import java.util.Objects;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DeliveryRepository;
import org.shine.server.db.DmRepository;
import org.shine.server.db.SignalRepository;
import org.shine.server.db.SyncRepository;
import org.shine.server.directory.UserDirectory;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.hub.HubSubscribers;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.peer.PeerCalls;

/**
 * What delivery takes from the node's composition root, each built once per node and shared by the delivery
 * instances and the engine: config and clock, the metrics, the signature verifier, the users (the node's one
 * directory cache), the peer calls, the attempt slots and the client of the engine that holds them, the hub's
 * subscribers, and the repositories over the node's one pool. Every one of them is safe on several event loops
 * (stateless, or thread-safe by its own Javadoc).
 */
public record DeliveryServices(AppConfig config, Clock clock, ShineMetrics metrics, SignatureVerifier verifier,
    UserDirectory directory, PeerCalls peers, AttemptSlots slots, EngineClient engine, HubSubscribers subscribers,
    DmRepository messages, DeliveryRepository deliveries, SignalRepository signals, SyncRepository outbox) {
  public DeliveryServices {
    Objects.requireNonNull(config);
    Objects.requireNonNull(clock);
    Objects.requireNonNull(metrics);
    Objects.requireNonNull(verifier);
    Objects.requireNonNull(directory);
    Objects.requireNonNull(peers);
    Objects.requireNonNull(slots);
    Objects.requireNonNull(engine);
    Objects.requireNonNull(subscribers);
    Objects.requireNonNull(messages);
    Objects.requireNonNull(deliveries);
    Objects.requireNonNull(signals);
    Objects.requireNonNull(outbox);
  }
}
