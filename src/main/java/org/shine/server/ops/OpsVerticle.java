package org.shine.server.ops;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.sqlclient.Pool;
import java.time.Clock;
import java.util.Objects;
import org.shine.server.config.AppConfig;
import org.shine.server.db.Database;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.InviteRepository;
import org.shine.server.db.OpsRepository;
import org.shine.server.db.QuarantineRepository;
import org.shine.server.gateway.SessionRegistry;
import org.shine.server.metrics.ShineMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wires the operator's side of a node (PROTOCOL §12): the timer of the sampled gauges (when metrics are on, every
 * {@code metrics.gaugePeriodMs}) and the admin API's own loopback listener (when {@code admin.port} is not 0).
 * One instance per node.
 */
public final class OpsVerticle extends VerticleBase {
  private static final Logger LOG = LoggerFactory.getLogger(OpsVerticle.class);
  private final AppConfig config;
  private final Clock clock;
  private final ShineMetrics metrics;
  private final SessionRegistry sessions;
  private long timer = -1;
  private HttpServer admin;

  public OpsVerticle(AppConfig config, Clock clock, ShineMetrics metrics, SessionRegistry sessions) {
    this.config = Objects.requireNonNull(config);
    this.clock = Objects.requireNonNull(clock);
    this.metrics = Objects.requireNonNull(metrics);
    this.sessions = Objects.requireNonNull(sessions);
  }

  @Override
  public Future<?> start() {
    Pool pool = Database.sharedPool(vertx, config.db());
    OpsRepository ops = new OpsRepository(pool);
    Future<Void> sampled = Future.succeededFuture();
    if (metrics.scrapeRegistry().isPresent()) {
      RowGauges gauges = new RowGauges(ops, metrics, config.serverLogin(), clock);
      sampled = gauges.sample();
      timer = vertx.setPeriodic(config.metrics().gaugePeriodMs(), id -> gauges.sample());
    }
    if (config.admin().port() == 0) {
      return sampled;
    }
    AdminApi api = new AdminApi(vertx, config, ops, new DirectoryRepository(pool), sessions,
        new QuarantineRepository(pool), new InviteRepository(pool), clock);
    return sampled.compose(v -> vertx.createHttpServer(new HttpServerOptions()
            .setHost(config.admin().host()).setPort(config.admin().port()).setHttp2ClearTextEnabled(false))
        .requestHandler(api.router())
        .listen())
        .onSuccess(server -> {
          admin = server;
          LOG.info("admin API at http://{}:{}{}", config.admin().host(), server.actualPort(), AdminApi.PREFIX);
        })
        .recover(failure -> Future.failedFuture(new IllegalStateException("admin API cannot listen on "
            + config.admin().host() + ":" + config.admin().port() + " (admin.port): " + failure.getMessage(),
            failure)));
  }

  @Override
  public Future<?> stop() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    return admin == null ? Future.succeededFuture() : admin.close();
  }
}
