package org.shine.server.ops;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import java.util.Objects;
import org.shine.server.config.AppConfig;
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
  private final OpsServices services;
  private long timer = -1;
  private HttpServer admin;

  public OpsVerticle(OpsServices services) {
    this.services = Objects.requireNonNull(services);
  }

  @Override
  public Future<?> start() {
    AppConfig config = services.config();
    ShineMetrics metrics = services.metrics();
    Future<Void> sampled = Future.succeededFuture();
    if (metrics.scrapeRegistry().isPresent()) {
      RowGauges gauges = new RowGauges(services.ops(), metrics, config.serverLogin(), services.clock());
      sampled = gauges.sample();
      timer = vertx.setPeriodic(config.metrics().gaugePeriodMs(), id -> gauges.sample());
    }
    if (config.admin().port() == 0) {
      return sampled;
    }
    AdminApi api = new AdminApi(vertx, services);
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
