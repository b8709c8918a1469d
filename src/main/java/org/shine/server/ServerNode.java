package org.shine.server;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import org.shine.server.config.AppConfig;

/**
 * Creates the Vert.x instance of one node: plain, or clustered with Hazelcast when {@code cluster.enabled}, both
 * Hazelcast and the clustered event bus bound to {@code cluster.host} only.
 */
public final class ServerNode {
  private ServerNode() {
  }

  public static Future<Vertx> vertx(AppConfig config) {
    if (!config.cluster().enabled()) {
      return Future.succeededFuture(Vertx.vertx());
    }
    return Vertx.builder()
        .with(new VertxOptions().setEventBusOptions(eventBus(config.cluster())))
        .withClusterManager(new HazelcastClusterManager(hazelcast(config)))
        .buildClustered();
  }

  private static Config hazelcast(AppConfig config) {
    AppConfig.Cluster cluster = config.cluster();
    Config hazelcast = new Config();
    hazelcast.setClusterName("shine-" + config.serverLogin());
    hazelcast.setProperty("hazelcast.logging.type", "slf4j");
    hazelcast.setProperty("hazelcast.phone.home.enabled", "false");
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
    return new EventBusOptions().setHost(cluster.host()).setClusterPublicHost(cluster.host());
  }
}
