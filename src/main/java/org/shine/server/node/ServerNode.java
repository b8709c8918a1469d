package org.shine.server.node;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.shine.server.config.AppConfig;
import org.shine.server.config.ConfigException;
import org.shine.server.metrics.ShineMetrics;

/**
 * Creates the Vert.x instance of one node: plain, or clustered with Hazelcast when {@code cluster.enabled}, both
 * Hazelcast and the clustered event bus bound to {@code cluster.host} only, the event bus on mutual TLS with
 * {@code cluster.tls}; its metrics (the Vert.x SPI) go to {@code metrics}. Called once at start-up, before any event
 * loop runs (it reads the TLS files).
 */
public final class ServerNode {
  private ServerNode() {
  }

  public static Future<Vertx> vertx(AppConfig config, ShineMetrics metrics) {
    if (!config.cluster().enabled()) {
      return Future.succeededFuture(OutOfMemoryHalt.install(metrics.vertxBuilder(new VertxOptions()).build()));
    }
    // a TLS file that cannot be read fails this future, before Hazelcast starts
    return Future.<EventBusOptions>future(promise -> promise.complete(eventBus(config.cluster())))
        .compose(eventBus -> metrics.vertxBuilder(new VertxOptions().setEventBusOptions(eventBus))
            .withClusterManager(new HazelcastClusterManager(hazelcast(config)))
            .buildClustered())
        .map(OutOfMemoryHalt::install);
  }

  private static Config hazelcast(AppConfig config) {
    AppConfig.Cluster cluster = config.cluster();
    Config hazelcast = new Config();
    hazelcast.setClusterName("shine-" + config.serverLogin());
    hazelcast.setProperty("hazelcast.logging.type", "slf4j");
    hazelcast.setProperty("hazelcast.phone.home.enabled", "false");
    // the server's own shutdown hook drains and then leaves the cluster through vertx.close(); Hazelcast's hook would
    // leave at the same time, under the draining requests
    hazelcast.setProperty("hazelcast.shutdownhook.enabled", "false");
    // otherwise Hazelcast listens on every interface (*:port), open to anyone who reaches the machine
    hazelcast.setProperty("hazelcast.socket.bind.any", "false");
    // the address to bind, taken as given; network interface matching (which this setting overrides) only finds
    // addresses listed on an interface, so it refuses a second loopback address (127.0.0.2) or a host name
    hazelcast.setProperty("hazelcast.local.localAddress", cluster.host());
    NetworkConfig network = hazelcast.getNetworkConfig();
    network.setPort(cluster.port()).setPortAutoIncrement(true);
    network.setPublicAddress(cluster.host());
    JoinConfig join = network.getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getAutoDetectionConfig().setEnabled(false);
    join.getTcpIpConfig().setEnabled(true).setMembers(cluster.members());
    return hazelcast;
  }

  private static EventBusOptions eventBus(AppConfig.Cluster cluster) {
    // the address other nodes connect to is published through Hazelcast; it must be the one we bind
    EventBusOptions options = new EventBusOptions().setHost(cluster.host()).setClusterPublicHost(cluster.host());
    AppConfig.Tls tls = cluster.tls();
    if (tls == null) {
      return options;
    }
    // the bus client presents the same key and certificate and checks the peer against the same trust; no host
    // name check (Vert.x disables it for the bus): trust in the certificate is what admits a node
    return options.setSsl(true)
        .setClientAuth(ClientAuth.REQUIRED)
        .setKeyCertOptions(new PemKeyCertOptions()
            .setKeyValue(pem("keyFile", tls.keyFile(), "PRIVATE KEY-----", "a PEM private key"))
            .setCertValue(pem("certFile", tls.certFile(), "-----BEGIN CERTIFICATE-----", "a PEM certificate")))
        .setTrustOptions(new PemTrustOptions()
            .addCertValue(pem("trustFile", tls.trustFile(), "-----BEGIN CERTIFICATE-----", "a PEM certificate")));
  }

  /** Reads one of the TLS files now, so a wrong path fails the start naming the key, not deep in the bus. */
  private static Buffer pem(String key, String file, String marker, String expected) {
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(Path.of(file));
    } catch (IOException | RuntimeException e) {
      throw new ConfigException("cluster.tls." + key + " " + file + " cannot be read: " + reason(e), e);
    }
    if (!new String(bytes, StandardCharsets.US_ASCII).contains(marker)) {
      throw new ConfigException("cluster.tls." + key + " " + file + " does not hold " + expected);
    }
    return Buffer.buffer(bytes);
  }

  private static String reason(Exception e) {
    if (e instanceof NoSuchFileException) {
      return "no such file";
    }
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    return e.toString();
  }
}
