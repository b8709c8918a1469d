package org.shine.server.peer;

import java.time.Clock;
import java.util.Objects;
import org.shine.server.config.AppConfig;
import org.shine.server.db.ServerKeyRepository;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.metrics.ShineMetrics;

/**
 * What the node's {@link PeerVerticle} takes from the node's composition root: the server identity, the bounded
 * signature verifier and the repository of other servers' keys (thread-safe or stateless), with config, clock and
 * metrics.
 */
public record PeerServices(AppConfig config, ServerIdentity identity, SignatureVerifier verifier, Clock clock,
    ShineMetrics metrics, ServerKeyRepository keys) {
  public PeerServices {
    Objects.requireNonNull(config);
    Objects.requireNonNull(identity);
    Objects.requireNonNull(verifier);
    Objects.requireNonNull(clock);
    Objects.requireNonNull(metrics);
    Objects.requireNonNull(keys);
  }
}
