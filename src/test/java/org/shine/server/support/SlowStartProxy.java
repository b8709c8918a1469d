package org.shine.server.support;

import io.vertx.core.Vertx;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import java.util.function.LongSupplier;

/**
 * A TCP proxy on loopback whose new connections wait {@code delayMs} before any byte passes, as a PostgreSQL that is
 * slow to take connections (a busy or recovering server): the TCP connect succeeds at once, the startup handshake
 * waits.
 */
public final class SlowStartProxy implements AutoCloseable {
  private final NetServer server;
  private final NetClient client;

  private SlowStartProxy(NetServer server, NetClient client) {
    this.server = server;
    this.client = client;
  }

  public static SlowStartProxy start(Vertx vertx, String host, int port, LongSupplier delayMs) {
    NetClient client = vertx.createNetClient();
    NetServer server = vertx.createNetServer().connectHandler(downstream -> {
      downstream.pause();
      long delay = delayMs.getAsLong();
      client.connect(port, host).onComplete(ar -> {
        if (ar.failed()) {
          downstream.close();
          return;
        }
        NetSocket upstream = ar.result();
        upstream.pause();
        vertx.setTimer(Math.max(1, delay), id -> {
          downstream.pipeTo(upstream);
          upstream.pipeTo(downstream);
        });
      });
    });
    server.listen(0, "127.0.0.1").await();
    return new SlowStartProxy(server, client);
  }

  public int port() {
    return server.actualPort();
  }

  @Override
  public void close() {
    server.close().await();
    client.close().await();
  }
}
