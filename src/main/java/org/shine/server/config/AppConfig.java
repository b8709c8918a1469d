package org.shine.server.config;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** The whole server configuration of PROTOCOL §11, read once, validated, and passed to constructors. */
public record AppConfig(
    String serverLogin,
    Http http,
    String publicUrl,
    String serverKeyFile,
    Db db,
    List<Peer> peers,
    Delivery delivery,
    Sync sync,
    Hub hub,
    Limits limits,
    Metrics metrics,
    Admin admin,
    Cluster cluster,
    Instances instances,
    Testing testing) {

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
    Objects.requireNonNull(metrics);
    Objects.requireNonNull(admin);
    Objects.requireNonNull(cluster);
    Objects.requireNonNull(instances);
    Objects.requireNonNull(testing);
  }

  /** The configured peer of that serverLogin, if any. */
  public Optional<Peer> peer(String serverLogin) {
    return peers.stream().filter(p -> p.serverLogin().equals(serverLogin)).findFirst();
  }

  /** Where the server listens. */
  public record Http(String host, int port) {
  }

  /** PostgreSQL connection settings; the timeouts bound a connect and every statement. */
  public record Db(String host, int port, String database, String user, String password, int poolSize,
      long connectTimeoutMs, long statementTimeoutMs) {
    public Db(String host, int port, String database, String user, String password, int poolSize) {
      this(host, port, database, user, password, poolSize, 5_000, 10_000);
    }

    public Db withDatabase(String name) {
      return new Db(host, port, name, user, password, poolSize, connectTimeoutMs, statementTimeoutMs);
    }
  }

  /**
   * Another access server this one talks to: {@code publicKeyB64} pins its server key (PROTOCOL §6a);
   * {@code legacy} lets that v1 sibling use the sync ops without a server session.
   */
  public record Peer(String serverLogin, String url, String publicKeyB64, boolean legacy) {
    public Peer(String serverLogin, String url) {
      this(serverLogin, url, null, false);
    }
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
  public record Hub(long accessTtlS, long refreshTtlS, long visibilityTimeoutS, long maxWaitS, long retentionS,
      long refreshGraceS, int challengesPerLogin) {
  }

  /** Resource bounds (PROTOCOL §2 and the v2 keys of §11). */
  public record Limits(int maxFrameBytes, int maxInFlightPerConnection, boolean webSocketCompression,
      int maxConnections, int maxConnectionsPerIp, long authTimeoutMs, long idleTimeoutMs, int maxResponseBytes,
      int sendsPerUserPerS, int writeQueueBytes, long slowReaderCloseMs, int verifyQueue) {
  }

  /**
   * Prometheus metrics at {@code GET /metrics} (PROTOCOL §12); the gauges of row counts are sampled every
   * {@code gaugePeriodMs}.
   */
  public record Metrics(boolean enabled, long gaugePeriodMs) {
    public Metrics(boolean enabled) {
      this(enabled, 15_000);
    }
  }

  /** The admin API's loopback listener (PROTOCOL §12); port 0 is off. */
  public record Admin(String host, int port) {
  }

  /**
   * Clustering of several nodes of one deployment (Hazelcast): the nodes find each other over TCP at
   * {@code members} (hosts, or host:port), starting at {@code port}; the cluster is named after the serverLogin,
   * so different deployments on one machine never merge. Hazelcast and the clustered event bus bind {@code host}
   * only; {@code tls} (may be null) puts the event bus on TLS.
   */
  public record Cluster(boolean enabled, List<String> members, int port, String host, Tls tls) {
    public Cluster {
      members = List.copyOf(members);
    }
  }

  /** PEM files for TLS on the clustered event bus: this node's key and certificate, and the CA it trusts. */
  public record Tls(String keyFile, String certFile, String trustFile) {
  }

  /** How many instances of each verticle one node deploys. */
  public record Instances(int gateway, int delivery, int retry, int sync, int hub, int directory) {
  }

  /**
   * Hooks for the fault suite only, off by default: {@code clockOffsetMs} runs this node's clock that far off the
   * system clock (read at start; docs/reliability.md).
   */
  public record Testing(long clockOffsetMs) {
  }
}
