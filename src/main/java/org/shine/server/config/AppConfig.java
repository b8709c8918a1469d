package org.shine.server.config;

import java.util.List;
import java.util.Objects;

/** The whole server configuration of PROTOCOL §11, read once, validated, and passed to constructors. */
public record AppConfig(
    String serverLogin,
    Http http,
    String publicUrl,
    Db db,
    List<Peer> peers,
    Delivery delivery,
    Sync sync,
    Hub hub,
    Limits limits,
    Cluster cluster,
    Instances instances) {

  public AppConfig {
    Objects.requireNonNull(serverLogin);
    Objects.requireNonNull(http);
    Objects.requireNonNull(publicUrl);
    Objects.requireNonNull(db);
    peers = List.copyOf(peers);
    Objects.requireNonNull(delivery);
    Objects.requireNonNull(sync);
    Objects.requireNonNull(hub);
    Objects.requireNonNull(limits);
    Objects.requireNonNull(cluster);
    Objects.requireNonNull(instances);
  }

  /** Where the server listens. */
  public record Http(String host, int port) {
  }

  /** PostgreSQL connection settings. */
  public record Db(String host, int port, String database, String user, String password, int poolSize) {
    public Db withDatabase(String name) {
      return new Db(host, port, name, user, password, poolSize);
    }
  }

  /** Another access server this one talks to. */
  public record Peer(String serverLogin, String url) {
  }

  /** Delivery schedule and backpressure (PROTOCOL §7). */
  public record Delivery(List<Long> scheduleMs, int askSiblingFromAttempt, long workerPeriodMs, long leaseMs,
      long callTimeoutMs, int maxInFlight, int queueCapacity, long maxClockSkewMs) {
    public Delivery {
      scheduleMs = List.copyOf(scheduleMs);
    }
  }

  /** Two-server sync pacing (PROTOCOL §8). */
  public record Sync(long periodMs, int pageSize) {
  }

  /** HTTP polling hub (PROTOCOL §10). */
  public record Hub(long accessTtlS, long refreshTtlS, long visibilityTimeoutS, long maxWaitS, long retentionS) {
  }

  /** Per-connection limits (PROTOCOL §2). */
  public record Limits(int maxFrameBytes, int maxInFlightPerConnection) {
  }

  /**
   * Clustering of several nodes of one deployment (Hazelcast): the nodes find each other over TCP at
   * {@code members} (hosts, or host:port), starting at {@code port}; the cluster is named after the serverLogin,
   * so different deployments on one machine never merge.
   */
  public record Cluster(boolean enabled, List<String> members, int port) {
    public Cluster {
      members = List.copyOf(members);
    }
  }

  /** How many instances of each verticle one node deploys. */
  public record Instances(int gateway, int delivery, int retry, int sync, int hub, int directory) {
  }
}
