package org.shine.server.node;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.db.StorageHealth;
import org.shine.server.delivery.DeliveryEngineVerticle;
import org.shine.server.delivery.DeliveryVerticle;
import org.shine.server.directory.DirectoryVerticle;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.gateway.GatewayVerticle;
import org.shine.server.hub.HubRoutes;
import org.shine.server.hub.HubVerticle;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.ops.OpsVerticle;
import org.shine.server.peer.PeerVerticle;
import org.shine.server.peer.ServerIdentity;
import org.shine.server.retry.RetryVerticle;
import org.shine.server.settings.SettingsVerticle;
import org.shine.server.sync.SyncVerticle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node of an access server: prepares the database, then deploys the verticles (the gateway last, so that
 * {@code /health} answers only once every consumer is ready).
 */
public final class ShineServer {
  private static final Logger LOG = LoggerFactory.getLogger(ShineServer.class);
  private final Vertx vertx;
  private final AppConfig config;
  private final Clock clock;
  private final ShineMetrics metrics;
  private final List<String> serviceDeployments = new ArrayList<>();
  private String peerDeployment;
  private String retryDeployment;
  private String opsDeployment;
  private String gatewayDeployment;
  private StorageHealth health;
  private NodeServices services;
  /** Completes once the gateway listens: peers are dialed only then (they check our login at our key document). */
  private final Promise<Void> gatewayUp = Promise.promise();

  /** On a Vert.x instance built without metrics: nothing is counted and {@code /metrics} is not served. */
  public ShineServer(Vertx vertx, AppConfig config, Clock clock) {
    this(vertx, config, clock, ShineMetrics.disabled());
  }

  /** {@code metrics} must be the ones {@code vertx} was built with ({@link ServerNode#vertx}). */
  public ShineServer(Vertx vertx, AppConfig config, Clock clock, ShineMetrics metrics) {
    this.vertx = Objects.requireNonNull(vertx);
    this.config = Objects.requireNonNull(config);
    this.clock = Objects.requireNonNull(clock);
    this.metrics = Objects.requireNonNull(metrics);
  }

  /** Prepares the database, builds the node's {@link NodeServices} once, then deploys the verticles over them. */
  public Future<Void> start() {
    AppConfig.Instances n = config.instances();
    return Database.prepare(vertx, config.db(), config.serverLogin())
        .onSuccess(v -> health = StorageHealth.open(vertx, config.db()))
        .compose(v -> loadIdentity())
        .compose(identity -> SignatureVerifier.chooseProvider(vertx).map(identity))
        .compose(identity -> {
          services = new NodeServices(vertx, config, clock, metrics, identity, health);
          return services.start();
        })
        .compose(v -> deploy(() -> new PeerVerticle(services.forPeers(), gatewayUp.future()), 1))
        .onSuccess(id -> peerDeployment = id)
        .compose(v -> Future.all(
            deploy(() -> new DirectoryVerticle(services.forDirectory()), n.directory()),
            // one engine per node: every delivery instance and the retry timer hand their attempts to it
            deploy(() -> new DeliveryEngineVerticle(services.forDelivery()), 1),
            deploy(() -> new DeliveryVerticle(services.forDelivery()), n.delivery()),
            deploy(() -> new SettingsVerticle(config, clock, services.settings()), 1),
            deploy(() -> new SyncVerticle(services.forSync()), n.sync()),
            deploy(() -> new HubVerticle(config, clock, services.subscribers(), services.hub()), n.hub())))
        .onSuccess(ids -> ids.<String>list().forEach(serviceDeployments::add))
        .compose(v -> deploy(() -> new RetryVerticle(config, clock, services.deliveries(), services.engine(), health),
            n.retry()))
        .onSuccess(id -> retryDeployment = id)
        .compose(v -> deploy(() -> new OpsVerticle(services.forOps()), 1))
        .onSuccess(id -> opsDeployment = id)
        .compose(v -> {
          // built once: what the hub's routes share across the gateway instances (polls, card reads per user)
          Function<Vertx, HubRoutes> hubRoutes = HubRoutes.perInstance(config, clock, services.verifier(),
              services.polls(), services.pool(), services.users());
          return deploy(() -> new GatewayVerticle(config, services.identity(), services.verifier(),
              services.connections(), services.limits(), metrics, health, services.sessions(), hubRoutes),
              n.gateway());
        })
        .onSuccess(id -> {
          gatewayDeployment = id;
          gatewayUp.tryComplete();
        })
        .onSuccess(v -> LOG.info("server {} is up at {} [http: {}:{}, metrics: {}, admin API: {}]",
            config.serverLogin(), config.publicUrl(), config.http().host(), config.http().port(),
            config.metrics().enabled() ? "http://" + config.http().host() + ":" + config.http().port() + "/metrics"
                : "off",
            config.admin().port() == 0 ? "off (admin.port)"
                : "http://" + config.admin().host() + ":" + config.admin().port() + "/admin/v1"))
        .mapEmpty();
  }

  /**
   * Drains: the gateway stops first (no new connections; in-flight requests finish against live back-end
   * verticles), then the retry worker (its running tick finishes), then the services, then the peer
   * connections that all of them use.
   */
  public Future<Void> stop() {
    return undeploy(gatewayDeployment)
        .compose(v -> undeploy(opsDeployment))
        .compose(v -> undeploy(retryDeployment))
        .compose(v -> Future.join(serviceDeployments.stream().map(vertx::undeploy).toList()))
        .compose(v -> undeploy(peerDeployment))
        .compose(v -> services == null ? Future.succeededFuture() : services.close())
        .compose(v -> health == null ? Future.succeededFuture() : health.close())
        .onComplete(ar -> LOG.debug("server {} stopped", config.serverLogin()))
        .mapEmpty();
  }

  /** This node's view of its database (after {@link #start()}). */
  public StorageHealth storageHealth() {
    return health;
  }

  /** This node's server identity (after {@link #start()}). */
  public ServerIdentity identity() {
    return services == null ? null : services.identity();
  }

  /** This node's composition root (after {@link #start()}). */
  public NodeServices services() {
    return services;
  }

  /** The server key, read once per node start (PROTOCOL §6a). */
  private Future<ServerIdentity> loadIdentity() {
    Pool pool = PgBuilder.pool().with(Database.poolOptions("shine-identity", 1)).with(Database.netOptions(config.db()))
        .connectingTo(Database.connectOptions(config.db())).using(vertx).build();
    return ServerIdentity.load(config, pool, clock).eventually(pool::close);
  }

  private Future<Void> undeploy(String deploymentId) {
    return deploymentId == null ? Future.succeededFuture() : vertx.undeploy(deploymentId);
  }

  private Future<String> deploy(Supplier<io.vertx.core.Deployable> factory, int instances) {
    return vertx.deployVerticle(factory, new DeploymentOptions().setInstances(instances));
  }
}
