package org.shine.server.util;

import io.vertx.core.http.WebSocketConnectOptions;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/** The {@code ws://host:port/path} URLs servers are reached at. */
public final class WsUrls {
  private WsUrls() {
  }

  /** True for an absolute ws:// or wss:// URL with a host, and a port in 1..65535 when it names one. */
  public static boolean isWsUrl(String url) {
    if (url == null) {
      return false;
    }
    try {
      URI uri = new URI(url);
      return ("ws".equals(uri.getScheme()) || "wss".equals(uri.getScheme())) && uri.getHost() != null
          && (uri.getPort() == -1 || (uri.getPort() >= 1 && uri.getPort() <= 65_535));
    } catch (URISyntaxException e) {
      return false;
    }
  }

  /** The host of a ws:// or wss:// URL, lower-case (an IPv6 literal keeps its brackets), or null. */
  public static String host(String url) {
    try {
      String host = new URI(url).getHost();
      return host == null ? null : host.toLowerCase(Locale.ROOT);
    } catch (URISyntaxException e) {
      return null;
    }
  }

  /** Connect options for a ws:// or wss:// URL (default port by scheme, path {@code /ws} when empty). */
  public static WebSocketConnectOptions connectOptions(String url) {
    URI uri = URI.create(url);
    boolean secure = "wss".equals(uri.getScheme());
    return new WebSocketConnectOptions()
        .setHost(uri.getHost())
        .setPort(uri.getPort() > 0 ? uri.getPort() : (secure ? 443 : 80))
        .setSsl(secure)
        .setURI(uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/ws" : uri.getRawPath());
  }
}
