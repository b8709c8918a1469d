package org.shine.server.directory;

import io.vertx.sqlclient.Pool;
import java.time.Clock;
import java.util.Objects;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.HubRepository;
import org.shine.server.db.InviteRepository;
import org.shine.server.db.ServerKeyRepository;
import org.shine.server.db.SyncRepository;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.peer.PeerCalls;

/**
 * What the directory takes from the node's composition root, each built once per node and shared by the directory
 * instances: the node's pool (for the card's transaction), the repositories over it ({@code outbox}: the sync queue
 * follows a card's routes in its transaction; {@code hubTokens}: a revoked key's token families end), the bounded
 * signature verifier and the peer calls (all thread-safe or stateless).
 */
public record DirectoryServices(AppConfig config, Clock clock, Pool pool, SignatureVerifier verifier,
    DirectoryRepository users, ServerKeyRepository servers, InviteRepository invites, SyncRepository outbox,
    HubRepository hubTokens, PeerCalls peers) {
  public DirectoryServices {
    Objects.requireNonNull(config);
    Objects.requireNonNull(clock);
    Objects.requireNonNull(pool);
    Objects.requireNonNull(verifier);
    Objects.requireNonNull(users);
    Objects.requireNonNull(servers);
    Objects.requireNonNull(invites);
    Objects.requireNonNull(outbox);
    Objects.requireNonNull(hubTokens);
    Objects.requireNonNull(peers);
  }
}
