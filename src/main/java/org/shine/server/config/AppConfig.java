package org.shine.server.config;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** The whole server configuration of PROTOCOL §11, read once, validated, and passed to constructors. */
public record AppConfig(
    String serverLogin,
    Http http,
    String publicUrl,
    List<String> publicUrlAliases,
    String serverKeyFile,
    Db db,
    List<Peer> peers,
    Delivery delivery,
    Sync sync,
    Hub hub,
    Limits limits,
    Egress egress,
    Directory directory,
    Quotas quotas,
    Metrics metrics,
    Admin admin,
    Cluster cluster,
    Instances instances,
    Testing testing) {

  public AppConfig {
    Objects.requireNonNull(serverLogin);
    Objects.requireNonNull(http);
    Objects.requireNonNull(publicUrl);
    publicUrlAliases = List.copyOf(publicUrlAliases);
    Objects.requireNonNull(db);
    peers = List.copyOf(peers);
    Objects.requireNonNull(delivery);
    Objects.requireNonNull(sync);
    Objects.requireNonNull(hub);
    Objects.requireNonNull(limits);
    Objects.requireNonNull(egress);
    Objects.requireNonNull(directory);
    Objects.requireNonNull(quotas);
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

  /** True when {@code url} is this server's own: its {@code publicUrl} or one of {@code publicUrlAliases}. */
  public boolean ownUrl(String url) {
    return publicUrl.equals(url) || publicUrlAliases.contains(url);
  }

  /**
   * Another access server this one talks to (PROTOCOL §6a): {@code publicKeyB64} pins its server key;
   * {@code protocol} is the server-session version it speaks ({@code v3}; {@code v2} for the login strings without
   * the URL; {@code v1} for an old sibling that syncs without a session); {@code insecure} lets a server session run
   * over plain {@code ws://} to a non-loopback address.
   */
  public record Peer(String serverLogin, String url, String publicKeyB64, PeerProtocol protocol, boolean insecure) {
    public Peer(String serverLogin, String url) {
      this(serverLogin, url, null, PeerProtocol.V3, false);
    }
  }

  /** The server-session versions of PROTOCOL §6a a configured peer may speak. */
  public enum PeerProtocol {
    @JsonProperty("v1") V1,
    @JsonProperty("v2") V2,
    @JsonProperty("v3") V3
  }

  /**
   * Delivery schedule and backpressure (PROTOCOL §7), and the peer budget of §13: calls in flight per destination
   * server and attempts per sending login, and how many timed-out calls in a row make a destination down.
   */
  public record Delivery(List<Long> scheduleMs, int askSiblingFromAttempt, long workerPeriodMs, long leaseMs,
      long callTimeoutMs, int maxInFlight, int queueCapacity, long maxClockSkewMs, int maxInFlightPerDestination,
      int maxInFlightPerSender, int timeoutsToDown) {
    public Delivery {
      scheduleMs = List.copyOf(scheduleMs);
    }

    /** The last point of the schedule: how long a message may be tried. */
    public long lastPointMs() {
      return scheduleMs.get(scheduleMs.size() - 1);
    }
  }

  /**
   * Two-server sync pacing (PROTOCOL §8): pages per pull run, how often a user may ask for a full re-sync
   * ({@code MarkAllUserSettingsUnsynced}), and how long a session's new pair waits for its forward (seed §4 step 7)
   * before sync offers it to the sender's sibling ({@code forwardHoldMs}; a failed forward ends the wait at once).
   */
  public record Sync(long periodMs, int pageSize, int maxPagesPerRun, int markAllPerUserPerMin, long forwardHoldMs) {
  }

  /** HTTP polling hub (PROTOCOL §10). */
  public record Hub(long accessTtlS, long refreshTtlS, long visibilityTimeoutS, long maxWaitS, long retentionS,
      long refreshGraceS, int challengesPerLogin) {
  }

  /** Resource bounds (PROTOCOL §2, the v2 keys of §11 and the rate limits of §13). */
  public record Limits(int maxFrameBytes, int maxInFlightPerConnection, boolean webSocketCompression,
      int maxConnections, int maxConnectionsPerIp, long authTimeoutMs, long idleTimeoutMs, int maxResponseBytes,
      int sendsPerUserPerS, int writeQueueBytes, long slowReaderCloseMs, int verifyQueue, int cardsPerIpPerMin,
      int openOpsPerIpPerS, int openOpsPerLoginPerS, int inboundPerRecipientPerS, int opsPerPeerPerS) {
  }

  /**
   * Whom this server dials (PROTOCOL §13): {@code denyCidrs} adds to the built-in deny list, {@code allowCidrs}
   * makes exceptions (the most specific entry decides; on a tie allow wins); key fetches for servers not yet known
   * are limited to {@code keyFetchesPerS} per claimed name and per source address (§6a).
   */
  public record Egress(List<String> denyCidrs, List<String> allowCidrs, int keyFetchesPerS) {
    public Egress {
      denyCidrs = List.copyOf(denyCidrs);
      allowCidrs = List.copyOf(allowCidrs);
    }
  }

  /** Who may register a login new to this server (PROTOCOL §13). */
  public record Directory(Registration registration) {
    public Directory {
      Objects.requireNonNull(registration);
    }
  }

  /**
   * {@code served}: a client publishes a new login's card only when it names this server; {@code invite}: and with
   * a one-time code of the admin API; {@code open}: any card.
   */
  public enum Registration {
    @JsonProperty("served") SERVED,
    @JsonProperty("invite") INVITE,
    @JsonProperty("open") OPEN
  }

  /** What one user may keep here (PROTOCOL §13): settings by count and by bytes of keys and values. */
  public record Quotas(int settingsCount, long settingsBytes) {
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
