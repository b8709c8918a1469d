package org.shine.server.gateway;

import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.StaticHandler;

/**
 * The web chat at {@code /app}: static ES modules and CSS from the jar's {@code shine-web/} resources, under a
 * strict Content-Security-Policy (no inline script or style, nothing from another origin, WebSockets and fetches to
 * this server only). The page speaks the ordinary protocol over this server's {@code /ws}; there is no web session.
 */
final class WebApp {
  static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
      + "img-src 'self' data:; connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; "
      + "frame-ancestors 'none'";
  private static final String ROOT = "shine-web";

  private WebApp() {
  }

  static void mount(Router router) {
    // a route "/app" also matches "/app/": only the bare path is redirected, so relative module URLs resolve
    router.get("/app").handler(ctx -> {
      if ("/app".equals(ctx.request().path())) {
        ctx.redirect("/app/");
      } else {
        ctx.next();
      }
    });
    StaticHandler files = StaticHandler.create(ROOT).setIndexPage("index.html").setCachingEnabled(false)
        .setDefaultContentEncoding("UTF-8");
    router.route("/app/*").handler(ctx -> {
      ctx.response().headers()
          .set("Content-Security-Policy", CONTENT_SECURITY_POLICY)
          .set("X-Content-Type-Options", "nosniff")
          .set("Referrer-Policy", "no-referrer")
          .set("Cross-Origin-Opener-Policy", "same-origin")
          .set(HttpHeaders.CACHE_CONTROL, "no-cache");
      ctx.next();
    }).handler(files);
  }
}
