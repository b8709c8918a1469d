package org.shine.tools.chaos;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.shine.server.cli.CliFailure;

/**
 * A TCP proxy on loopback for the fault suite: every connection it accepts is relayed to the first of its targets
 * that takes a connection (several: the nodes of one clustered server behind one address, as a load balancer would
 * put them), each chunk of bytes held back a random 0..{@code maxDelayMs} (order kept), and every {@code dropEveryMs}
 * one open connection, picked at random, is cut on both sides. Every end must be a loopback address: it is a test
 * tool, not a relay.
 */
final class ChaosProxy {
  /** Bytes a direction may hold back before it stops reading its source (a bound, like every queue here). */
  private static final int HELD_BYTES_LIMIT = 4 << 20;
  private static final String LOOPBACK = "127.0.0.1";

  private final Vertx vertx;
  private final int listenPort;
  private final List<Target> targets;
  private final long dropEveryMs;
  private final long maxDelayMs;
  private final Random random;
  private final Set<Link> links = ConcurrentHashMap.newKeySet();
  private final AtomicLong accepted = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();
  private NetServer server;
  private NetClient client;
  private long dropTimer = -1;

  ChaosProxy(Vertx vertx, int listenPort, List<Target> targets, long dropEveryMs, long maxDelayMs, long seed) {
    if (targets.isEmpty()) {
      throw CliFailure.usage("the proxy needs a target");
    }
    targets.forEach(target -> requireLoopback(target.host()));
    this.vertx = vertx;
    this.listenPort = listenPort;
    this.targets = List.copyOf(targets);
    this.dropEveryMs = dropEveryMs;
    this.maxDelayMs = maxDelayMs;
    this.random = new Random(seed);
  }

  private static void requireLoopback(String host) {
    try {
      if (!InetAddress.getByName(host).isLoopbackAddress()) {
        throw CliFailure.usage("the proxy relays to loopback only, not " + host);
      }
    } catch (UnknownHostException e) {
      throw CliFailure.usage("unknown host " + host);
    }
  }

  /** Listens on 127.0.0.1; completes with the port (the one asked for, or the system's pick for 0). */
  Future<Integer> start() {
    client = vertx.createNetClient();
    server = vertx.createNetServer(new NetServerOptions().setHost(LOOPBACK).setPort(listenPort));
    server.connectHandler(this::accept);
    return server.listen().map(s -> {
      if (dropEveryMs > 0) {
        dropTimer = vertx.setPeriodic(dropEveryMs, id -> dropOne());
      }
      return s.actualPort();
    });
  }

  Future<Void> stop() {
    if (dropTimer >= 0) {
      vertx.cancelTimer(dropTimer);
    }
    List<Link> open = new ArrayList<>(links);
    open.forEach(Link::close);
    return server.close().eventually(() -> client.close());
  }

  long accepted() {
    return accepted.get();
  }

  long dropped() {
    return dropped.get();
  }

  /** Connections open now. */
  int open() {
    return links.size();
  }

  private void accept(NetSocket inbound) {
    accepted.incrementAndGet();
    inbound.pause();
    connect(inbound, 0);
  }

  /** Relays {@code inbound} to the first target from {@code index} on that takes a connection. */
  private void connect(NetSocket inbound, int index) {
    Target target = targets.get(index);
    client.connect(target.port(), target.host()).onComplete(ar -> {
      if (ar.failed()) {
        if (index + 1 < targets.size()) {
          connect(inbound, index + 1);
          return;
        }
        System.out.printf("CHAOS proxy: no connection to %s: %s%n", targets, ar.cause());
        inbound.close();
        return;
      }
      Link link = new Link(inbound, ar.result());
      links.add(link);
      link.start();
    });
  }

  private void dropOne() {
    List<Link> open = new ArrayList<>(links);
    if (open.isEmpty()) {
      return;
    }
    dropped.incrementAndGet();
    open.get(random.nextInt(open.size())).close();
  }

  private long delayNanos() {
    return maxDelayMs <= 0 ? 0 : TimeUnit.MILLISECONDS.toNanos(random.nextLong(maxDelayMs + 1));
  }

  /** Where the proxy relays to. */
  record Target(String host, int port) {
    /** {@code HOST:PORT}. */
    static Target parse(String text) {
      int colon = text.lastIndexOf(':');
      int port;
      try {
        port = colon <= 0 ? -1 : Integer.parseInt(text.substring(colon + 1));
      } catch (NumberFormatException e) {
        port = -1;
      }
      if (port <= 0 || port > 65_535) {
        throw CliFailure.usage("--target takes HOST:PORT: " + text);
      }
      return new Target(text.substring(0, colon), port);
    }

    @Override
    public String toString() {
      return host + ":" + port;
    }
  }

  /** One relayed connection: both directions, closed together. */
  private final class Link {
    private final NetSocket inbound;
    private final NetSocket outbound;
    private boolean closed;

    Link(NetSocket inbound, NetSocket outbound) {
      this.inbound = inbound;
      this.outbound = outbound;
    }

    void start() {
      new Direction(inbound, outbound).start();
      new Direction(outbound, inbound).start();
      inbound.closeHandler(v -> close());
      outbound.closeHandler(v -> close());
      inbound.exceptionHandler(e -> close());
      outbound.exceptionHandler(e -> close());
      inbound.resume();
    }

    void close() {
      if (closed) {
        return;
      }
      closed = true;
      links.remove(this);
      inbound.close();
      outbound.close();
    }
  }

  /** Bytes from one socket to the other, each chunk written when its delay is over, in the order read. */
  private final class Direction {
    private final NetSocket from;
    private final NetSocket to;
    private final ArrayDeque<Held> held = new ArrayDeque<>();
    private long heldBytes;
    private long lastDueNanos;
    private boolean timerArmed;

    Direction(NetSocket from, NetSocket to) {
      this.from = from;
      this.to = to;
    }

    void start() {
      from.handler(this::onData);
    }

    private void onData(Buffer data) {
      long due = Math.max(System.nanoTime() + delayNanos(), lastDueNanos);
      lastDueNanos = due;
      held.add(new Held(due, data));
      heldBytes += data.length();
      if (heldBytes > HELD_BYTES_LIMIT) {
        from.pause();
      }
      flush();
    }

    private void flush() {
      long now = System.nanoTime();
      while (!held.isEmpty() && held.peek().dueNanos() <= now) {
        Held next = held.poll();
        heldBytes -= next.data().length();
        to.write(next.data());
      }
      if (heldBytes <= HELD_BYTES_LIMIT / 2) {
        from.resume();
      }
      if (!held.isEmpty() && !timerArmed) {
        timerArmed = true;
        long waitMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(held.peek().dueNanos() - now));
        vertx.setTimer(waitMs, id -> {
          timerArmed = false;
          flush();
        });
      }
    }
  }

  private record Held(long dueNanos, Buffer data) {
  }
}
