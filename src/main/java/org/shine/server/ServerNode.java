package org.shine.server;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import org.shine.server.config.AppConfig;

/** Creates the Vert.x instance of one node: plain, or clustered with Hazelcast when {@code cluster.enabled}. */
public final class ServerNode {
  private ServerNode() {
  }

  public static Future<Vertx> vertx(AppConfig config) {
    if (!config.cluster().enabled()) {
      return Future.succeededFuture(Vertx.vertx());
    }
    Config hazelcast = new Config();
    hazelcast.setClusterName("shine-" + config.serverLogin());
    hazelcast.setProperty("hazelcast.logging.type", "slf4j");
    hazelcast.setProperty("hazelcast.phone.home.enabled", "false");
    hazelcast.getNetworkConfig().setPort(config.cluster().port()).setPortAutoIncrement(true);
    JoinConfig join = hazelcast.getNetworkConfig().getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getAutoDetectionConfig().setEnabled(false);
    join.getTcpIpConfig().setEnabled(true).setMembers(config.cluster().members());
    return Vertx.builder().withClusterManager(new HazelcastClusterManager(hazelcast)).buildClustered();
  }
}
