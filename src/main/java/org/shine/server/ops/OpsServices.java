package org.shine.server.ops;

import java.time.Clock;
import java.util.Objects;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.InviteRepository;
import org.shine.server.db.OpsRepository;
import org.shine.server.db.QuarantineRepository;
import org.shine.server.gateway.SessionRegistry;
import org.shine.server.metrics.ShineMetrics;

/** What the operator's side of a node takes from the node's composition root (each built once per node). */
public record OpsServices(AppConfig config, Clock clock, ShineMetrics metrics, SessionRegistry sessions,
    OpsRepository ops, DirectoryRepository users, QuarantineRepository quarantine, InviteRepository invites) {
  public OpsServices {
    Objects.requireNonNull(config);
    Objects.requireNonNull(clock);
    Objects.requireNonNull(metrics);
    Objects.requireNonNull(sessions);
    Objects.requireNonNull(ops);
    Objects.requireNonNull(users);
    Objects.requireNonNull(quarantine);
    Objects.requireNonNull(invites);
  }
}
