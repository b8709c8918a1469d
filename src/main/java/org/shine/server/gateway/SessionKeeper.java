package org.shine.server.gateway;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.http.ServerWebSocketHandshake;
import io.vertx.core.net.SocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.LongSupplier;
import org.shine.server.config.AppConfig;
import org.shine.server.metrics.SessionKind;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.FlushCoalescing;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connections and sessions of one gateway instance and their limits (PROTOCOL §11), on its event loop:
 * <ul>
 *   <li>the connection budget of the node ({@link ConnectionBudget}): a connection over it is answered 503 and cut
 *   after {@value #REFUSED_GRACE_MS} ms; its place is given back once, when it closes;</li>
 *   <li>timeouts and pings ({@link #housekeeping}): an anonymous session that sends no request for
 *   {@code authTimeoutMs} is closed; every session is pinged every third of {@code idleTimeoutMs} and closed when it
 *   has sent nothing, not even a pong, for that long;</li>
 *   <li>congestion: a session holding more than {@code writeQueueBytes} unsent is no longer read (so it sends no new
 *   requests), gets no events until it drains (then it is closed if it missed any, so the client reloads), and is
 *   closed when it stays so for {@code slowReaderCloseMs};</li>
 *   <li>admission: at most {@code maxInFlightPerConnection} requests in flight per session, none while draining;</li>
 *   <li>draining ({@link #drain}): no new sessions or requests, then a wait of at most {@value #DRAIN_LIMIT_MS} ms
 *   for the requests in flight.</li>
 * </ul>
 * Time is read from the clock it is given (nanoseconds), so that a test moves it.
 */
final class SessionKeeper {
  /** The gateway's log lines keep the gateway's logger name (operators filter on it). */
  private static final Logger LOG = LoggerFactory.getLogger(GatewayVerticle.class);
  static final long DRAIN_POLL_MS = 50;
  static final long DRAIN_LIMIT_MS = 10_000;
  /** A connection over the limits gets this long to read its 503 before it is cut. */
  static final long REFUSED_GRACE_MS = 2_000;
  static final short CLOSE_POLICY = 1008;
  static final short CLOSE_GOING_AWAY = 1001;
  static final Buffer PING = Buffer.buffer("shine");
  private static final long MS = 1_000_000L;

  private final Vertx vertx;
  private final AppConfig config;
  private final AppConfig.Limits limits;
  private final ConnectionBudget connections;
  private final ShineMetrics metrics;
  private final SessionRegistry registry;
  private final LongSupplier nanoClock;
  private final Set<Session> sessions = new HashSet<>();
  /** Remote addresses (host:port) of this instance's connections that are over the limits. */
  private final Set<String> refused = new HashSet<>();
  /**
   * How each budgeted connection of this instance (by remote host:port) gives its place back, once. A connection
   * upgraded to a WebSocket reports its close only on the WebSocket (Vert.x moves the channel to a handler of its
   * own, so the HTTP connection's close handler never runs), so the WebSocket's close handler must release it too.
   */
  private final Map<String, Runnable> releases = new HashMap<>();
  private boolean draining;

  SessionKeeper(Vertx vertx, AppConfig config, ConnectionBudget connections, ShineMetrics metrics,
      SessionRegistry registry, LongSupplier nanoClock) {
    this.vertx = Objects.requireNonNull(vertx);
    this.config = Objects.requireNonNull(config);
    this.limits = config.limits();
    this.connections = Objects.requireNonNull(connections);
    this.metrics = Objects.requireNonNull(metrics);
    this.registry = Objects.requireNonNull(registry);
    this.nanoClock = Objects.requireNonNull(nanoClock);
  }

  /** A new connection: takes its place in the budget, or marks it refused and cuts it after a grace. */
  void onConnection(HttpConnection connection) {
    String address = connection.remoteAddress().hostAddress();
    String key = key(connection.remoteAddress());
    String why = connections.tryAcquire(address);
    if (why == null) {
      Runnable release = new Runnable() {
        private boolean released;

        @Override
        public void run() {
          if (!released) {
            released = true;
            releases.remove(key, this);
            connections.release(address);
          }
        }
      };
      releases.put(key, release);
      connection.closeHandler(v -> release.run());
      return;
    }
    LOG.debug("connection refused [address: {}]: {}", key, why);
    refused.add(key);
    connection.closeHandler(v -> refused.remove(key));
    vertx.setTimer(REFUSED_GRACE_MS, id -> connection.close());
  }

  /** Whether the connection from {@code remote} is over the limits (its requests get 503). */
  boolean refuses(SocketAddress remote) {
    return refused.contains(key(remote));
  }

  /** A WebSocket upgrade: 503 over the limits, 404 anywhere but {@code /ws}. */
  void handshake(ServerWebSocketHandshake handshake) {
    if (refuses(handshake.remoteAddress())) {
      handshake.reject(Status.UNAVAILABLE);
    } else if (!"/ws".equals(handshake.path())) {
      handshake.reject(Status.NOT_FOUND);
    } else {
      handshake.accept();
    }
  }

  /** The session of a new WebSocket; null (and the socket closed) while draining. */
  Session open(ServerWebSocket socket) {
    // from here on the WebSocket's close gives the place back: the table keeps nothing for an open session
    Runnable found = releases.remove(key(socket.remoteAddress()));
    Runnable release = found != null ? found : () -> { };
    if (draining) {
      socket.closeHandler(v -> release.run());
      socket.close(CLOSE_GOING_AWAY, "server is shutting down");
      return null;
    }
    Session session = new Session(socket, nanoClock.getAsLong());
    session.pushEvent = frame -> push(session, frame);
    session.closeRevoked = () -> terminate(session, CLOSE_POLICY, "KEY_REVOKED: this device's key was revoked");
    sessions.add(session);
    metrics.sessionOpened();
    socket.setWriteQueueMaxSize(limits.writeQueueBytes());
    FlushCoalescing.install(socket);
    socket.closeHandler(v -> {
      release.run();
      close(session);
    });
    return session;
  }

  /** The session sent something (a frame or a pong): it is not idle. */
  void heard(Session session) {
    session.lastHeardNanos = nanoClock.getAsLong();
  }

  /** The session sent a request (well-formed or not): neither idle nor waiting to log in. */
  void heardRequest(Session session) {
    long now = nanoClock.getAsLong();
    session.lastHeardNanos = now;
    session.lastRequestNanos = now;
  }

  /** Takes a request into flight, or says why not: 503 while draining, 429 over the session's in-flight bound. */
  ProtocolException admit(Session session) {
    if (draining) {
      return new ProtocolException(Status.UNAVAILABLE, ErrorCode.OVERLOADED,
          "server is shutting down; retry on another server or later");
    }
    if (session.inFlight >= limits.maxInFlightPerConnection()) {
      return new ProtocolException(Status.TOO_MANY_REQUESTS, ErrorCode.TOO_MANY_IN_FLIGHT,
          "more than " + limits.maxInFlightPerConnection() + " requests in flight on this connection");
    }
    session.inFlight++;
    return null;
  }

  /** A request admitted by {@link #admit} is done; a session that has just logged in moves to its kind's count. */
  void finished(Session session) {
    session.inFlight--;
    SessionKind now = session.kind();
    if (now == session.countedKind || !sessions.contains(session)) {
      return;
    }
    metrics.sessionChanged(session.countedKind, now);
    session.countedKind = now;
    if (now == SessionKind.CLIENT) {
      registry.opened(session.login);
    }
  }

  /** A response: always written (reading stops while the session is congested, which bounds them). */
  void write(Session session, String frame) {
    if (session.socket.isClosed()) {
      return;
    }
    session.socket.writeTextMessage(frame);
    watchCongestion(session);
  }

  /** An event: dropped while the session is congested (history and the hub still have it). */
  void push(Session session, String frame) {
    if (session.congestedSinceNanos != 0) {
      session.droppedEvents++;
      return;
    }
    write(session, frame);
  }

  /** Closes sessions past their auth, idle or slow-reader time, and pings the others that are due. */
  void housekeeping() {
    long now = nanoClock.getAsLong();
    long authNanos = limits.authTimeoutMs() * MS;
    long idleNanos = limits.idleTimeoutMs() * MS;
    long pingNanos = idleNanos / 3;
    long slowNanos = limits.slowReaderCloseMs() * MS;
    List<Session> due = new ArrayList<>();
    for (Session session : sessions) {
      if (session.socket.isClosed()) {
        continue;
      }
      if (session.congestedSinceNanos != 0 && now - session.congestedSinceNanos >= slowNanos) {
        terminate(session, CLOSE_POLICY, "slow reader: " + limits.writeQueueBytes()
            + " bytes unsent for " + limits.slowReaderCloseMs() + " ms; reconnect and reload history");
      } else if (session.anonymous() && session.inFlight == 0 && now - session.lastRequestNanos >= authNanos) {
        terminate(session, CLOSE_POLICY, "not logged in within " + limits.authTimeoutMs() + " ms");
      } else if (now - session.lastHeardNanos >= idleNanos) {
        terminate(session, CLOSE_GOING_AWAY, "idle for " + limits.idleTimeoutMs() + " ms");
      } else if (now - session.lastPingNanos >= pingNanos) {
        due.add(session);
      }
    }
    for (Session session : due) {
      session.lastPingNanos = now;
      if (session.congestedSinceNanos == 0) {
        session.socket.writePing(PING);
      }
    }
  }

  /** How often {@link #housekeeping} runs: a quarter of the shortest timeout, between 10 ms and 1 s. */
  long housekeepingPeriodMs() {
    long shortest = Math.min(limits.authTimeoutMs(), Math.min(limits.slowReaderCloseMs(),
        limits.idleTimeoutMs() / 3));
    return Math.max(10, Math.min(1_000, shortest / 4));
  }

  /** The HTTP server's backstop for connections that never speak: past the idle timeout and the longest poll. */
  long backstopIdleMs() {
    return Math.max(limits.idleTimeoutMs(), config.hub().maxWaitS() * 1000 + 5_000) + housekeepingPeriodMs();
  }

  boolean draining() {
    return draining;
  }

  /** Drains: takes no new session or request, and completes once none is in flight or the drain limit passed. */
  Future<Void> drain() {
    draining = true;
    Promise<Void> drained = Promise.promise();
    waitForInFlight(drained, nanoClock.getAsLong() + DRAIN_LIMIT_MS * MS);
    return drained.future();
  }

  private void waitForInFlight(Promise<Void> drained, long deadlineNanos) {
    int inFlight = sessions.stream().mapToInt(s -> s.inFlight).sum();
    if (inFlight == 0 || nanoClock.getAsLong() - deadlineNanos > 0) {
      if (inFlight > 0) {
        LOG.warn("drain limit reached with {} requests in flight", inFlight);
      }
      drained.complete();
      return;
    }
    vertx.setTimer(DRAIN_POLL_MS, id -> waitForInFlight(drained, deadlineNanos));
  }

  private void close(Session session) {
    if (!sessions.remove(session)) {
      return;
    }
    metrics.sessionClosed(session.countedKind);
    if (session.countedKind == SessionKind.CLIENT) {
      registry.closed(session.login);
    }
    if (session.events != null) {
      session.events.unregister();
    }
  }

  private void watchCongestion(Session session) {
    if (session.congestedSinceNanos != 0 || !session.socket.writeQueueFull()) {
      return;
    }
    session.congestedSinceNanos = nanoClock.getAsLong();
    session.socket.pause();
    session.socket.drainHandler(v -> {
      session.socket.drainHandler(null);
      session.congestedSinceNanos = 0;
      if (session.droppedEvents > 0) {
        terminate(session, CLOSE_POLICY, "slow reader: " + session.droppedEvents
            + " events were dropped; reconnect and reload history");
      } else {
        session.socket.resume();
      }
    });
    LOG.debug("session congested: no longer read [session: {}]", session.who());
  }

  private static void terminate(Session session, short code, String reason) {
    LOG.debug("session closed [session: {}, code: {}]: {}", session.who(), code, reason);
    session.socket.close(code, reason.length() > 120 ? reason.substring(0, 120) : reason);
  }

  private static String key(SocketAddress address) {
    return address == null ? "" : address.hostAddress() + ":" + address.port();
  }
}
