package org.shine.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.micrometer.Label;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MetricsDomain;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.VertxPrometheusOptions;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The meters of one node (PROTOCOL §12): its own Prometheus registry, which the Vert.x metrics SPI fills too
 * (event bus, HTTP server, pools, SQL client, JVM), and the project's counters on it. Created once per node, before
 * its Vert.x instance, and passed by constructor; {@link #disabled()} records nothing ({@code metrics.enabled}
 * false, unit tests).
 */
public final class ShineMetrics {
  /** Prometheus: {@code shine_signature_verifications_total{op}}. */
  public static final String SIGNATURE_VERIFICATIONS = "shine.signature.verifications";
  /** The tag of {@link #SIGNATURE_VERIFICATIONS} and {@link #PEER_CALLS}: what was verified or called. */
  public static final String OP = "op";
  /** Prometheus: {@code shine_sends_total{outcome}}, values from {@link SendOutcome}. */
  public static final String SENDS = "shine.sends";
  /** Prometheus: {@code shine_delivery_transitions_total{state}}, values from {@link Transition}. */
  public static final String TRANSITIONS = "shine.delivery.transitions";
  /** Prometheus: {@code shine_delivery_attempts_total{attempt,outcome}}, outcomes from {@link AttemptOutcome}. */
  public static final String ATTEMPTS = "shine.delivery.attempts";
  /** Prometheus: {@code shine_delivery_due}: accepted rows now due (sampled, {@code metrics.gaugePeriodMs}). */
  public static final String DELIVERY_DUE = "shine.delivery.due";
  /** Prometheus: {@code shine_delivery_accepted}: accepted rows in all (sampled). */
  public static final String DELIVERY_ACCEPTED = "shine.delivery.accepted";
  /** Prometheus: {@code shine_peer_up{peer}}: 1 while that server answers, 0 while it is down. */
  public static final String PEER_UP = "shine.peer.up";
  /** Prometheus: {@code shine_peer_calls_seconds{peer,op,outcome}} (histogram), outcomes from {@link PeerCallOutcome}. */
  public static final String PEER_CALLS = "shine.peer.calls";
  /**
   * Prometheus: {@code shine_peer_dials_total{peer,outcome}}: connections this node opened ({@code opened}) or failed
   * to open ({@code failed}) towards that server: a down peer's reconnect loop counts one {@code failed} a try.
   */
  public static final String PEER_DIALS = "shine.peer.dials";
  /** Prometheus: {@code shine_sync_lag_items{sibling}}: unsynced outbox items held for that sibling (sampled). */
  public static final String SYNC_LAG = "shine.sync.lag.items";
  /** Prometheus: {@code shine_sync_quarantined_total{reason}}, reasons from {@link QuarantineReason}. */
  public static final String SYNC_QUARANTINED = "shine.sync.quarantined";
  /** Prometheus: {@code shine_hub_queue_depth}: hub events not acknowledged yet (sampled). */
  public static final String HUB_QUEUE_DEPTH = "shine.hub.queue.depth";
  /** Prometheus: {@code shine_ws_sessions{kind}}, kinds from {@link SessionKind}. */
  public static final String WS_SESSIONS = "shine.ws.sessions";
  public static final String OUTCOME = "outcome";
  public static final String STATE = "state";
  public static final String ATTEMPT = "attempt";
  public static final String PEER = "peer";
  public static final String SIBLING = "sibling";
  public static final String KIND = "kind";
  public static final String REASON = "reason";
  /** The {@code attempt} value of an extra attempt (PROTOCOL §7.6), beside the schedule's {@code 1}-{@code 5}. */
  public static final String EXTRA = "extra";
  /** PROTOCOL §12: at most this many distinct {@code peer} and {@code sibling} values; beyond, {@code other}. */
  public static final int MAX_SERVER_LABELS = 1_000;
  private static final int MAX_ATTEMPT_LABEL = 5;
  /** Buckets of {@link #PEER_CALLS}: a few fixed ones rather than a percentile histogram's ~70 per series. */
  private static final Duration[] CALL_BUCKETS = {Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25),
      Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
      Duration.ofSeconds(1), Duration.ofMillis(2_500), Duration.ofSeconds(5), Duration.ofSeconds(10)};
  /** Vert.x keeps backend registries in a JVM-wide map by name: each node needs a name of its own. */
  private static final AtomicInteger NODES = new AtomicInteger();

  private final PrometheusMeterRegistry prometheus;
  private final String registryName;
  private final MeterRegistry registry;
  private final Map<SignatureOp, Counter> verifications = new EnumMap<>(SignatureOp.class);
  private final Map<SendOutcome, Counter> sends = new EnumMap<>(SendOutcome.class);
  private final Map<Transition, Counter> transitions = new EnumMap<>(Transition.class);
  private final Map<QuarantineReason, Counter> quarantined = new EnumMap<>(QuarantineReason.class);
  private final Map<String, Counter> attempts = new ConcurrentHashMap<>();
  /** Timers of {@code shine_peer_calls_seconds} by peer, op and outcome (each label bounded). */
  private final Map<String, Timer> peerCalls = new ConcurrentHashMap<>();
  /** Counters of {@code shine_peer_dials_total} by peer and outcome. */
  private final Map<String, Counter> peerDials = new ConcurrentHashMap<>();
  private final Map<SessionKind, AtomicInteger> sessions = new EnumMap<>(SessionKind.class);
  private final Map<String, AtomicInteger> peersUp = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> syncLag = new ConcurrentHashMap<>();
  private final AtomicLong due = new AtomicLong();
  private final AtomicLong accepted = new AtomicLong();
  private final AtomicLong hubQueue = new AtomicLong();
  private final BoundedLabel servers = new BoundedLabel(MAX_SERVER_LABELS);

  private ShineMetrics(MeterRegistry registry, PrometheusMeterRegistry prometheus, String registryName) {
    this.registry = registry;
    this.prometheus = prometheus;
    this.registryName = registryName;
    // every op from the start, at 0, so that the first verification of a kind already shows as an increase
    for (SignatureOp op : SignatureOp.values()) {
      verifications.put(op, Counter.builder(SIGNATURE_VERIFICATIONS)
          .description("Signature verifications performed, by what was verified")
          .tag(OP, op.tag())
          .register(registry));
    }
    for (SendOutcome outcome : SendOutcome.values()) {
      sends.put(outcome, Counter.builder(SENDS).description("SendMessagePair requests answered, by outcome")
          .tag(OUTCOME, outcome.tag()).register(registry));
    }
    for (Transition state : Transition.values()) {
      transitions.put(state, Counter.builder(TRANSITIONS)
          .description("Delivery rows that reached a terminal state, by state").tag(STATE, state.tag())
          .register(registry));
    }
    for (QuarantineReason reason : QuarantineReason.values()) {
      quarantined.put(reason, Counter.builder(SYNC_QUARANTINED)
          .description("Items pulled from a sibling that were ACKed and quarantined, by reason")
          .tag(REASON, reason.tag()).register(registry));
    }
    for (SessionKind kind : SessionKind.values()) {
      AtomicInteger count = new AtomicInteger();
      sessions.put(kind, count);
      Gauge.builder(WS_SESSIONS, count, AtomicInteger::get).description("Open WebSocket sessions, by login kind")
          .tag(KIND, kind.tag()).register(registry);
    }
    Gauge.builder(DELIVERY_DUE, due, AtomicLong::get).description("Accepted delivery rows now due (sampled)")
        .register(registry);
    Gauge.builder(DELIVERY_ACCEPTED, accepted, AtomicLong::get)
        .description("Accepted delivery rows in all (sampled)").register(registry);
    Gauge.builder(HUB_QUEUE_DEPTH, hubQueue, AtomicLong::get)
        .description("Hub events not acknowledged yet (sampled)").register(registry);
  }

  /** Vert.x's pool meters, and the label that says what a pool serves (the peer clients' pools carry none). */
  private static final String POOL_METERS = "vertx.pool.";
  private static final String POOL_TYPE = "pool_type";
  private static final List<String> PEER_POOLS = List.of("ws", "http");
  /**
   * Gauges Vert.x makes once per database connection (the SQL client's in-flight count), once per event-bus address
   * (the handler count and the pending messages, whose address label is off here) or once per HTTP server or client
   * instance (open connections and requests; shine_ws_sessions counts the sessions, shine_peer_* the peers) under one
   * name: see {@link #forNode}.
   */
  private static final List<String> GAUGES_MADE_PER_INSTANCE = List.of("vertx.sql.processing.pending",
      "vertx.eventbus.handlers", "vertx.eventbus.pending", "vertx.http.server.active.connections",
      "vertx.http.server.active.ws.connections", "vertx.http.server.active.requests",
      "vertx.http.client.active.connections", "vertx.http.client.active.ws.connections",
      "vertx.http.client.active.requests", "vertx.http.client.queue.pending");

  /**
   * The meters of one node of server {@code serverLogin} ({@code metrics.enabled}): on its own registry, or none
   * when disabled.
   */
  public static ShineMetrics forNode(String serverLogin, boolean enabled) {
    if (!enabled) {
      return disabled();
    }
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    // Vert.x makes the SQL client's meters once per database connection, the event bus's gauges once per address and
    // the HTTP servers' and clients' once per instance, each under one name and one set of labels: timers and
    // counters are shared, but every gauge after the first is refused with a warning at each start, and the one kept
    // counts one instance only. Pools have meters of their own (vertx_pool_*), the event bus its message counters.
    registry.config().meterFilter(MeterFilter.deny(id -> GAUGES_MADE_PER_INSTANCE.contains(id.getName())));
    // The peers' WebSocket and HTTP clients have a pool per peer address, labelled with the address (a label no
    // meter here carries), made again each time a lost peer is dialed: its gauges were refused as already registered,
    // with a warning, whenever a peer went away. The peers have meters of their own (shine_peer_*); the database
    // pools keep theirs.
    registry.config().meterFilter(MeterFilter.deny(id -> id.getName().startsWith(POOL_METERS)
        && PEER_POOLS.contains(id.getTag(POOL_TYPE))));
    return new ShineMetrics(registry, registry, "shine-" + serverLogin + "-" + NODES.incrementAndGet());
  }

  /** Meters that record nothing, and a Vert.x instance without metrics. */
  public static ShineMetrics disabled() {
    // a composite registry without members hands out meters that drop every value
    return new ShineMetrics(new CompositeMeterRegistry(), null, null);
  }

  /** The registry that {@code GET /metrics} scrapes, when metrics are on. */
  public Optional<PrometheusMeterRegistry> scrapeRegistry() {
    return Optional.ofNullable(prometheus);
  }

  /**
   * A builder of this node's Vert.x instance from {@code options}: with the Micrometer SPI on this registry when
   * metrics are on. SQL client meters carry the pool's metrics name as the {@code client_namespace} label; no label
   * that grows with users or connections (event-bus address, HTTP path, remote address) is on.
   */
  public VertxBuilder vertxBuilder(VertxOptions options) {
    if (prometheus == null) {
      return Vertx.builder().with(options);
    }
    MicrometerMetricsOptions metricsOptions = new MicrometerMetricsOptions()
        .setEnabled(true)
        .setRegistryName(registryName)
        .setPrometheusOptions(new VertxPrometheusOptions().setEnabled(true))
        .setJvmMetricsEnabled(true)
        .addLabels(Label.NAMESPACE)
        // Vert.x gives every TCP client (each SQL pool's, the peers' WebSocket client) one gauge of the same name
        // and no label: the second registration is refused with a warning and the gauge counts one client only.
        // Peer connections have meters of their own (shine_peer_*); the pools have theirs (vertx_pool_*).
        .addDisabledMetricsCategory(MetricsDomain.NET_CLIENT);
    return Vertx.builder().with(options.setMetricsOptions(metricsOptions))
        .withMetrics(new MicrometerMetricsFactory(prometheus));
  }

  /** One signature verification of that kind was performed (any thread). */
  public void signatureVerified(SignatureOp op) {
    verifications.get(op).increment();
  }

  /** A SendMessagePair was answered (any thread). */
  public void sent(SendOutcome outcome) {
    sends.get(outcome).increment();
  }

  /** A delivery row moved to a terminal state (any thread). */
  public void transition(Transition state) {
    transitions.get(state).increment();
  }

  /**
   * A delivery attempt ended: {@code attempt} is its point in the schedule (1-based; a schedule longer than five
   * points counts its later attempts under {@code 5}), {@code extra} an attempt beside the schedule (PROTOCOL §7.6).
   */
  public void attempted(int attempt, boolean extra, AttemptOutcome outcome) {
    String label = extra ? EXTRA : Integer.toString(Math.max(1, Math.min(MAX_ATTEMPT_LABEL, attempt)));
    attempts.computeIfAbsent(label + "|" + outcome.tag(), key -> Counter.builder(ATTEMPTS)
        .description("Delivery attempts, by schedule point and outcome").tag(ATTEMPT, label)
        .tag(OUTCOME, outcome.tag()).register(registry)).increment();
  }

  /** An item pulled from a sibling was quarantined for that reason (any thread). */
  public void quarantined(QuarantineReason reason) {
    quarantined.get(reason).increment();
  }

  /** A WebSocket session opened (not logged in yet). */
  public void sessionOpened() {
    sessions.get(SessionKind.UNAUTHENTICATED).incrementAndGet();
  }

  /** A session logged in: it counts under {@code to} from now on. */
  public void sessionChanged(SessionKind from, SessionKind to) {
    sessions.get(from).decrementAndGet();
    sessions.get(to).incrementAndGet();
  }

  /** A session of that kind closed. */
  public void sessionClosed(SessionKind kind) {
    sessions.get(kind).decrementAndGet();
  }

  /** Another server ({@code serverLogin}, from {@code peers} or a current route) is up or down. */
  public void peerUp(String serverLogin, boolean up) {
    String peer = servers.of(serverLogin);
    peersUp.computeIfAbsent(peer, name -> {
      AtomicInteger value = new AtomicInteger();
      Gauge.builder(PEER_UP, value, AtomicInteger::get).description("1 while that server answers, 0 while down")
          .tag(PEER, name).register(registry);
      return value;
    }).set(up ? 1 : 0);
  }

  /** This node dialed another server ({@code serverLogin}): the connection {@code opened}, or not. */
  public void peerDial(String serverLogin, boolean opened) {
    String peer = servers.of(serverLogin);
    String outcome = opened ? "opened" : "failed";
    peerDials.computeIfAbsent(peer + '\n' + outcome, key -> Counter.builder(PEER_DIALS)
        .description("Connections dialed to other servers, by server and outcome")
        .tag(PEER, peer).tag(OUTCOME, outcome).register(registry)).increment();
  }

  /** One call of {@code op} to another server took {@code nanos} and ended so. */
  public void peerCall(String serverLogin, String op, PeerCallOutcome outcome, long nanos) {
    String peer = servers.of(serverLogin);
    // one lookup per call on the hot path, no builder: the label values are bounded (peers, ops, outcomes)
    peerCalls.computeIfAbsent(peer + '\n' + op + '\n' + outcome.tag(), key -> Timer.builder(PEER_CALLS)
        .description("Calls to other servers, by server, op and outcome")
        .tag(PEER, peer).tag(OP, op).tag(OUTCOME, outcome.tag())
        .serviceLevelObjectives(CALL_BUCKETS)
        .register(registry)).record(nanos, TimeUnit.NANOSECONDS);
  }

  /** The sampled row counts of the delivery table: rows due now and accepted rows in all. */
  public void deliveryRows(long dueNow, long acceptedInAll) {
    due.set(dueNow);
    accepted.set(acceptedInAll);
  }

  /** The sampled number of hub events not acknowledged yet. */
  public void hubQueueDepth(long events) {
    hubQueue.set(events);
  }

  /**
   * The sampled unsynced outbox items per sibling server; a sibling missing from {@code bySibling} has none now.
   */
  public void syncLag(Map<String, Long> bySibling) {
    Map<String, Long> byLabel = new HashMap<>();
    bySibling.forEach((sibling, items) -> byLabel.merge(servers.of(sibling), items, Long::sum));
    syncLag.forEach((label, value) -> {
      if (!byLabel.containsKey(label)) {
        value.set(0);
      }
    });
    byLabel.forEach((label, items) -> syncLag.computeIfAbsent(label, name -> {
      AtomicLong value = new AtomicLong();
      Gauge.builder(SYNC_LAG, value, AtomicLong::get)
          .description("Unsynced outbox items this server holds for that sibling (sampled)")
          .tag(SIBLING, name).register(registry);
      return value;
    }).set(items));
  }
}
