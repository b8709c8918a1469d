package org.shine.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.micrometer.Label;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.VertxPrometheusOptions;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The meters of one node (PROTOCOL §12): its own Prometheus registry, which the Vert.x metrics SPI fills too
 * (event bus, HTTP server, pools, SQL client, JVM), and the project's counters on it. Created once per node, before
 * its Vert.x instance, and passed by constructor; {@link #disabled()} records nothing ({@code metrics.enabled}
 * false, unit tests).
 */
public final class ShineMetrics {
  /** Prometheus: {@code shine_signature_verifications_total{op}}. */
  public static final String SIGNATURE_VERIFICATIONS = "shine.signature.verifications";
  /** The tag of {@link #SIGNATURE_VERIFICATIONS}, values from {@link SignatureOp}. */
  public static final String OP = "op";
  /** Vert.x keeps backend registries in a JVM-wide map by name: each node needs a name of its own. */
  private static final AtomicInteger NODES = new AtomicInteger();

  private final PrometheusMeterRegistry prometheus;
  private final String registryName;
  private final Map<SignatureOp, Counter> verifications = new EnumMap<>(SignatureOp.class);

  private ShineMetrics(MeterRegistry registry, PrometheusMeterRegistry prometheus, String registryName) {
    this.prometheus = prometheus;
    this.registryName = registryName;
    // every op from the start, at 0, so that the first verification of a kind already shows as an increase
    for (SignatureOp op : SignatureOp.values()) {
      verifications.put(op, Counter.builder(SIGNATURE_VERIFICATIONS)
          .description("Signature verifications performed, by what was verified")
          .tag(OP, op.tag())
          .register(registry));
    }
  }

  /**
   * The meters of one node of server {@code serverLogin} ({@code metrics.enabled}): on its own registry, or none
   * when disabled.
   */
  public static ShineMetrics forNode(String serverLogin, boolean enabled) {
    if (!enabled) {
      return disabled();
    }
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
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
        .addLabels(Label.NAMESPACE);
    return Vertx.builder().with(options.setMetricsOptions(metricsOptions))
        .withMetrics(new MicrometerMetricsFactory(prometheus));
  }

  /** One signature verification of that kind was performed (any thread). */
  public void signatureVerified(SignatureOp op) {
    verifications.get(op).increment();
  }
}
