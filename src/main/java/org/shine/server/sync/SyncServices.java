package org.shine.server.sync;

import java.time.Clock;
import java.util.Objects;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.QuarantineRepository;
import org.shine.server.db.SettingsRepository;
import org.shine.server.db.StorageHealth;
import org.shine.server.db.SyncRepository;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.peer.PeerCalls;
import org.shine.server.util.PerKeyRate;

/**
 * What sync takes from the node's composition root, each built once per node and shared by the sync instances:
 * {@code resyncRate} is the node's one limit of MarkAllUserSettingsUnsynced per user (thread-safe); the repositories
 * and the peer calls are stateless over the node's pool and bus.
 */
public record SyncServices(AppConfig config, Clock clock, ShineMetrics metrics, StorageHealth health,
    PerKeyRate resyncRate, SyncRepository outbox, DirectoryRepository users, QuarantineRepository quarantine,
    SettingsRepository settings, PeerCalls peers) {
  public SyncServices {
    Objects.requireNonNull(config);
    Objects.requireNonNull(clock);
    Objects.requireNonNull(metrics);
    Objects.requireNonNull(health);
    Objects.requireNonNull(resyncRate);
    Objects.requireNonNull(outbox);
    Objects.requireNonNull(users);
    Objects.requireNonNull(quarantine);
    Objects.requireNonNull(settings);
    Objects.requireNonNull(peers);
  }
}
