package org.shine.server.support;

import io.vertx.core.Vertx;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * A TCP proxy on loopback whose new connections wait {@code delayMs} before any byte passes, as a PostgreSQL that is
 * slow to take connections (a busy or recovering server): the TCP connect succeeds at once, the startup handshake
 * waits.
 */
public final class SlowStartProxy implements AutoCloseable {
  private final NetServer server;
  private final NetClient client;
  private final AtomicInteger open;

  private SlowStartProxy(NetServer server, NetClient client, AtomicInteger open) {
    this.server = server;
    this.client = client;
    this.open = open;
  }

  public static SlowStartProxy start(Vertx vertx, String host, int port, LongSupplier delayMs) {
    NetClient client = vertx.createNetClient();
    AtomicInteger open = new AtomicInteger();
    NetServer server = vertx.createNetServer().connectHandler(downstream -> {
      open.incrementAndGet();
      downstream.closeHandler(v -> open.decrementAndGet());
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
    return new SlowStartProxy(server, client, open);
  }

  /** Connections a client has open to this proxy now (one it closed is no longer counted). */
  public int openConnections() {
    return open.get();
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
