package org.shine.server.gateway;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.net.InetAddress;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import org.shine.server.config.AppConfig;
import org.shine.server.util.Cidr;
import org.shine.server.util.WsUrls;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The addresses of the configured {@code "protocol": "v1"} peers (PROTOCOL §6a step 6): sessionless sync is taken
 * only from the addresses a v1 peer's URL resolves to. Resolved when the gateway starts and again every
 * {@value #REFRESH_MS} ms (off the event loop); until a name resolves, nothing is taken from it.
 */
final class LegacyPeerAddresses {
  private static final Logger LOG = LoggerFactory.getLogger(LegacyPeerAddresses.class);
  static final long REFRESH_MS = 60_000;
  private final Vertx vertx;
  private final List<AppConfig.Peer> legacy;
  private volatile Map<String, Set<String>> addresses = Map.of();
  private long timer = -1;

  LegacyPeerAddresses(Vertx vertx, AppConfig config) {
    this.vertx = Objects.requireNonNull(vertx);
    this.legacy = config.peers().stream().filter(p -> p.protocol() == AppConfig.PeerProtocol.V1).toList();
  }

  /** Resolves now and then every {@value #REFRESH_MS} ms; completes once the first resolution is done. */
  Future<Void> start() {
    if (legacy.isEmpty()) {
      return Future.succeededFuture();
    }
    timer = vertx.setPeriodic(REFRESH_MS, id -> refresh());
    return refresh();
  }

  void stop() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
  }

  /** True when {@code ip} is an address of the v1 peer {@code serverLogin}. */
  boolean of(String serverLogin, String ip) {
    Set<String> known = addresses.get(serverLogin);
    return known != null && known.contains(normal(ip));
  }

  private Future<Void> refresh() {
    return vertx.executeBlocking(() -> {
      Map<String, Set<String>> resolved = new HashMap<>();
      for (AppConfig.Peer peer : legacy) {
        String host = WsUrls.host(peer.url());
        try {
          InetAddress literal = Cidr.literal(host);
          InetAddress[] all = literal != null ? new InetAddress[] {literal} : InetAddress.getAllByName(host);
          resolved.put(peer.serverLogin(), Arrays.stream(all).map(InetAddress::getHostAddress)
              .map(LegacyPeerAddresses::normal).collect(Collectors.toUnmodifiableSet()));
        } catch (Exception e) {
          LOG.warn("the address of v1 peer {} cannot be resolved; its sessionless sync is refused until it is:"
              + " {}", peer.serverLogin(), e.toString());
        }
      }
      addresses = Map.copyOf(resolved);
      return null;
    }, false).mapEmpty();
  }

  private static String normal(String ip) {
    InetAddress literal = Cidr.literal(ip);
    return literal == null ? ip : literal.getHostAddress();
  }
}
