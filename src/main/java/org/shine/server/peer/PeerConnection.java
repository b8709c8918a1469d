package org.shine.server.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.net.SocketAddress;
import java.util.function.Consumer;
import org.shine.server.config.AppConfig.PeerProtocol;
import org.shine.server.egress.EgressResolver;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Ops;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.shine.server.util.Backoff;
import org.shine.server.util.FlushCoalescing;
import org.shine.server.util.WsUrls;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One persistent WebSocket connection to another server: its life, from the dial to the reconnect loop. Each connect
 * goes to an address the egress policy allows (PROTOCOL §13: the host resolved once, every address checked, the
 * connection made to a checked one; a configured peer is always allowed). On each new socket the server session is
 * opened by {@link SessionLogin} when the transport allows one; the requests go through {@link CallWindow}; calls of
 * the open server ops do not wait for the login, calls that need a server session (the sync ops) do. A call while
 * disconnected connects at once (one connect at a time, shared by every waiting call); a lost connection fails its
 * in-flight calls immediately and reconnects by itself with capped exponential backoff and jitter. Per destination
 * (PROTOCOL §7.6): once a connect fails the peer is down — calls fail at once, without a connect of their own, while
 * one reconnect loop tries every {@value #BACKOFF_MAX_MS} ms at most; the first connection that opens again is
 * reported ({@code onReturn}) so that the rows waiting for this peer get an extra attempt. PROTOCOL §13: a peer whose
 * last {@link CallLimits#timeoutsToDown()} calls timed out, or whose socket holds more than
 * {@link CallLimits#writeQueueBytes()} unsent (the socket is then closed), is down the same way, and stays down
 * across reconnects until a {@link PeerProbe} is answered, or until an answer to any other call but a login comes.
 * A peer heard from ({@link #heardFrom()}: its server session to this node was authenticated) is dialed, or probed,
 * at once instead of after the backoff, at most once per {@value #HEARD_FROM_INTERVAL_MS} ms
 * ({@link HeardFromPacing}). Confined to one event loop. Over 400 lines for a reason: what stands alone is already
 * out ({@link CallWindow}, {@link SessionLogin}, {@link PeerProbe}, {@link HeardFromPacing}, {@code Backoff}),
 * and the dial, the reconnect loop and the probe loop that remain all read and write the same state ({@code socket},
 * {@code connecting}, {@code down}, {@code lastError}, the peer-up metric), so splitting them would pass that state
 * back and forth instead of owning it once.
 */
final class PeerConnection {
  private static final Logger LOG = LoggerFactory.getLogger(PeerConnection.class);
  private static final long BACKOFF_START_MS = 250;
  /** PROTOCOL §7.6: a server that comes back is noticed within this (plus jitter below it). */
  static final long BACKOFF_MAX_MS = 5_000;
  /**
   * PROTOCOL §7.6: hearing from a peer cuts the wait of a dial or probe towards it at most this often, so a peer that
   * logs in in a loop cannot make this node dial it in a loop.
   */
  static final long HEARD_FROM_INTERVAL_MS = 1_000;

  private final Vertx vertx;
  private final WebSocketClient client;
  private final String url;
  private final String serverLogin;
  private final EgressResolver egress;
  private final Future<Void> nodeUp;
  private final boolean insecure;
  private final ShineMetrics metrics;
  private final long callTimeoutMs;
  private final boolean persistent;
  private final Consumer<String> onConnected;
  private final Consumer<String> onReturn;
  private final CallWindow calls;
  private final SessionLogin session;
  private final PeerProbe probe;
  private long probeTimer = -1;
  private long probeDueNanos;
  private WebSocket socket;
  private Future<WebSocket> connecting;
  private final Backoff reconnects = Backoff.retries(BACKOFF_START_MS, BACKOFF_MAX_MS);
  /** Why the last connect, login or connection failed (null: nothing failed since the last success). */
  private String lastError;
  private long reconnectTimer = -1;
  /** When the current (or last) connection opened. */
  private long attachedNanos;
  private long reconnectDueNanos;
  private final HeardFromPacing heard = new HeardFromPacing(HEARD_FROM_INTERVAL_MS, System::nanoTime);
  /** The peer was heard from while a dial was under way: if that dial fails, the next one is not left to backoff. */
  private boolean heardWhileDialing;
  private long lastUsedNanos = System.nanoTime();
  private boolean closed;
  /** A connect failed and no connection has opened since: calls fail at once while the reconnect loop runs. */
  private boolean down;

  /**
   * {@code target}: whom this connection dials (a configured peer is {@code persistent}: kept open, always allowed by
   * the egress policy); {@code nodeUp}: completes once this node listens (its key document is served).
   */
  PeerConnection(Vertx vertx, WebSocketClient client, Target target, CallerHandshake handshake,
      EgressResolver egress, Future<Void> nodeUp, ShineMetrics metrics, long callTimeoutMs,
      CallLimits limits, Consumer<String> onConnected, Consumer<String> onSession,
      Consumer<String> onReturn) {
    this.vertx = vertx;
    this.probe = new PeerProbe(limits.timeoutsToDown(), BACKOFF_MAX_MS);
    this.client = client;
    this.url = target.url();
    this.calls = new CallWindow(vertx, url, limits, new CallWindow.Listener() {
      @Override
      public void timedOut(String op, ObjectNode payload) {
        if (probe.timedOut(op, payload)) {
          unanswered("the last " + probe.timeoutsToDown() + " calls timed out (the last: " + op + ")");
        }
      }

      @Override
      public void unread(WebSocket ws, String op, ObjectNode payload, long unsentBytes) {
        probe.unread(op, payload);
        unanswered(unsentBytes + " bytes unsent, over limits.writeQueueBytes " + limits.writeQueueBytes());
        ws.close();
      }

      @Override
      public void answered(String op, boolean wasProbe) {
        probe.answered();
        // an answer to a call of ours, not to our login (a tarpit completes those): the peer takes calls again
        if (wasProbe || !Ops.SERVER_AUTH_CHALLENGE.equals(op) && !Ops.SERVER_AUTH_LOGIN.equals(op)) {
          answersAgain();
        }
      }
    });
    this.serverLogin = target.serverLogin();
    this.insecure = target.insecure();
    this.persistent = target.configured();
    this.session = new SessionLogin(vertx, handshake, target, BACKOFF_MAX_MS, onSession);
    this.egress = egress;
    this.nodeUp = nodeUp;
    this.metrics = metrics;
    this.callTimeoutMs = callTimeoutMs;
    this.onConnected = onConnected;
    this.onReturn = onReturn;
    if (persistent) {
      ensureConnected();
    }
  }

  boolean connected() {
    return socket != null;
  }

  /** True while the peer has accepted our server login on the current connection. */
  boolean authenticated() {
    return session.authenticated();
  }

  boolean persistent() {
    return persistent;
  }

  /** True while the peer is unreachable (PROTOCOL §7.6): calls fail at once, one reconnect loop runs. */
  boolean down() {
    return down;
  }

  String url() {
    return url;
  }

  /** The serverLogin that {@code peers} or a current route gives for this URL: its metrics label. */
  String serverLogin() {
    return serverLogin;
  }

  /** What the admin API shows of this connection. */
  PeerStatus status() {
    long backoff = probe.holdsDown() ? probe.delayMs() : down || socket == null ? reconnects.delayMs() : 0;
    String problem = lastError != null ? lastError : session.problem();
    return new PeerStatus(serverLogin, url, persistent, socket != null, authenticated(), down, problem,
        backoff, calls.inFlight(), calls.waitingCount());
  }

  /** True while calls are in flight or waiting, or a connect is under way. */
  boolean busy() {
    return !calls.empty() || connecting != null;
  }

  /** Nanoseconds since the last call on this connection, or 0 while calls are in flight or waiting. */
  long idleNanos() {
    return calls.empty() && connecting == null ? System.nanoTime() - lastUsedNanos : 0;
  }

  /**
   * Sends one request; fails with a {@link ProtocolException} carrying the peer's status, or 503. At most
   * {@code window} requests are in flight on the connection (a server limits requests per connection); at most
   * {@code maxWaiting} more wait here (beyond: 503 {@code PEER_BUSY}), and the timeout counts from the call. A
   * call that {@code needsSession} fails with 401 at once while the peer refuses our login.
   */
  Future<JsonNode> call(String op, ObjectNode payload, long timeoutMs, boolean needsSession) {
    lastUsedNanos = System.nanoTime();
    if (probe.holdsDown()) {
      return Future.failedFuture(unansweredFailure());
    }
    long deadline = System.currentTimeMillis() + timeoutMs;
    Future<WebSocket> ready = ensureConnected();
    if (needsSession) {
      ready = ready.compose(ws -> session.settled().map(v -> ws));
    }
    return ready.compose(ws -> {
      if (needsSession && !session.ready()) {
        String why = session.problem() != null ? session.problem() : lastError != null ? lastError : "not logged in";
        return Future.failedFuture(new ProtocolException(Status.UNAUTHORIZED, ErrorCode.NOT_AUTHENTICATED,
            "no server session with " + url + " (" + why + "); " + op + " waits until there is one"));
      }
      return calls.call(ws, op, payload, deadline);
    });
  }

  private ProtocolException unansweredFailure() {
    return new ProtocolException(Status.UNAVAILABLE, ErrorCode.PEER_UNAVAILABLE, "peer " + url
        + " is down: its calls went unanswered; probing every " + BACKOFF_MAX_MS / 1000 + " s at most");
  }

  void close() {
    closed = true;
    cancelTimers();
    if (socket != null) {
      socket.close();
    }
  }

  private void cancelTimers() {
    if (probeTimer >= 0) {
      vertx.cancelTimer(probeTimer);
      probeTimer = -1;
    }
    if (reconnectTimer >= 0) {
      vertx.cancelTimer(reconnectTimer);
      reconnectTimer = -1;
    }
    session.close();
  }

  private Future<WebSocket> ensureConnected() {
    if (socket != null) {
      return Future.succeededFuture(socket);
    }
    if (connecting != null) {
      return connecting;
    }
    if (down) {
      return Future.failedFuture(new ProtocolException(Status.UNAVAILABLE, ErrorCode.PEER_UNAVAILABLE,
          "peer " + url + " is down; reconnecting every " + BACKOFF_MAX_MS / 1000 + " s at most"));
    }
    return connect();
  }

  /** One connect (shared by every waiting call); a failure marks the peer down and starts the reconnect loop. */
  private Future<WebSocket> connect() {
    if (closed) {
      return Future.failedFuture(new ProtocolException(Status.UNAVAILABLE, ErrorCode.PEER_UNAVAILABLE,
          "the connection to " + url + " is closed"));
    }
    // nothing is dialed before this node serves its own key document: the peer checks our login against it
    connecting = nodeUp.compose(v -> egress.resolve(url, persistent))
        .compose(destination -> client.connect(connectOptions(destination))
            .map(ws -> new Connected(ws, destination.allowsSession(insecure))))
        .map(connected -> {
          metrics.peerDial(serverLogin, true);
          WebSocket ws = connected.ws();
          FlushCoalescing.install(ws);
          ws.textMessageHandler(calls::onFrame);
          ws.closeHandler(v -> detach(ws));
          ws.exceptionHandler(failure -> LOG.debug("peer socket error [url: {}]: {}", url, failure.toString()));
          attach(ws, connected.sessionAllowed());
          return ws;
        })
        .recover(failure -> {
          lastError = "connect failed: " + failure.getMessage();
          metrics.peerUp(serverLogin, false);
          metrics.peerDial(serverLogin, false);
          if (!down) {
            down = true;
            LOG.info("peer down: calls towards it fail at once until it answers again [url: {}]: {}", url,
                failure.toString());
          }
          scheduleReconnect();
          if (failure instanceof EgressResolver.RefusedException refused) {
            return Future.failedFuture(new ProtocolException(Status.FORBIDDEN, ErrorCode.PEER_NOT_ALLOWED,
                "peer " + url + " is not dialed: " + refused.getMessage()));
          }
          return Future.failedFuture(failure instanceof ProtocolException ? failure
              : new ProtocolException(Status.UNAVAILABLE, ErrorCode.PEER_UNAVAILABLE,
                  "peer " + url + " is unreachable: " + failure.getMessage()));
        })
        .onComplete(ar -> {
          connecting = null;
          boolean dialAgain = ar.failed() && heardWhileDialing;
          heardWhileDialing = false;
          if (dialAgain) {
            heardFrom();
          }
        });
    return connecting;
  }

  /** The connect options of one dial: the URL's host for the Host header, SNI and certificate; a checked address. */
  private WebSocketConnectOptions connectOptions(EgressResolver.Destination destination) {
    return WsUrls.connectOptions(url)
        .setServer(SocketAddress.inetSocketAddress(destination.port(), destination.address().getHostAddress()))
        .setConnectTimeout(callTimeoutMs)
        .setTimeout(callTimeoutMs);
  }

  private record Connected(WebSocket ws, boolean sessionAllowed) {
  }

  private void attach(WebSocket ws, boolean sessionAllowed) {
    socket = ws;
    attachedNanos = System.nanoTime();
    calls.use(ws);
    if (probe.holdsDown()) {
      // a handshake proves nothing of a peer that left calls unanswered: only its probe's answer does
      scheduleProbe();
    } else {
      lastError = null;
      metrics.peerUp(serverLogin, true);
    }
    session.start(ws, calls, callTimeoutMs, sessionAllowed);
    // the reconnect loop starts afresh once this connection proved itself (its session is ready, or it lived long):
    // a peer that takes each connection and drops it in the login is dialed ever more slowly, not every 250 ms
    session.settled().onComplete(ar -> {
      if (socket == ws && session.ready()) {
        reconnects.reset();
      }
    });
    onConnected.accept(url);
    if (down && !probe.holdsDown()) {
      down = false;
      LOG.info("peer answers again [url: {}]", url);
      onReturn.accept(url);
    }
  }

  private void detach(WebSocket ws) {
    calls.lost(ws);
    if (socket != ws) {
      return;
    }
    socket = null;
    session.stop();
    if (!closed && !probe.holdsDown()) {
      // closed here (idle, shutting down, or down already) says nothing more of the peer
      lastError = "connection lost";
      metrics.peerUp(serverLogin, false);
    }
    LOG.info("peer connection lost [url: {}]", url);
    if (System.nanoTime() - attachedNanos >= BACKOFF_MAX_MS * 1_000_000L) {
      reconnects.reset();
    }
    scheduleReconnect();
  }

  /** After a lost connection or a failed connect: connect again after the backoff (every connection). */
  private void scheduleReconnect() {
    if (closed || reconnectTimer >= 0) {
      return;
    }
    reconnects.failed(System.nanoTime());
    reconnectIn(reconnects.jitteredDelayMs());
  }

  private void reconnectIn(long delayMs) {
    reconnectDueNanos = System.nanoTime() + delayMs * 1_000_000L;
    reconnectTimer = vertx.setTimer(Math.max(1, delayMs), id -> {
      reconnectTimer = -1;
      if (!closed && socket == null && connecting == null) {
        connect();
      }
    });
  }

  /**
   * PROTOCOL §7.6: the peer was heard from (its server session to this node was authenticated), so what waits for
   * its backoff goes now — the dial of a connection without a socket, or the probe of a peer held down on one —
   * paced by {@link HeardFromPacing}: when the last such move was less than {@value #HEARD_FROM_INTERVAL_MS} ms ago,
   * it goes once that interval is over, or at its own time if that is sooner. A dial under way that fails is followed
   * by one such move. The connection that opens (the probe that is answered) makes the peer up as any does, and so
   * gives the rows waiting for it their extra attempt. Nothing else changes: a connected peer that answers is up.
   */
  void heardFrom() {
    if (closed) {
      return;
    }
    if (connecting != null) {
      heardWhileDialing = true;
    } else if (socket == null && reconnectTimer >= 0) {
      long waitMs = heard.heard(pendingMs(reconnectDueNanos));
      if (waitMs >= 0) {
        vertx.cancelTimer(reconnectTimer);
        reconnectTimer = -1;
        LOG.debug("peer heard from: dialing it in {} ms instead of after the backoff [url: {}]", waitMs, url);
        if (waitMs == 0) {
          connect();
        } else {
          reconnectIn(waitMs);
        }
      }
    } else if (socket != null && probeTimer >= 0) {
      long waitMs = heard.heard(pendingMs(probeDueNanos));
      if (waitMs >= 0) {
        vertx.cancelTimer(probeTimer);
        probeTimer = -1;
        LOG.debug("peer heard from: probing it in {} ms instead of after the backoff [url: {}]", waitMs, url);
        if (waitMs == 0) {
          sendProbe();
        } else {
          probeIn(waitMs);
        }
      }
    }
  }

  private static long pendingMs(long dueNanos) {
    return Math.max(0, (dueNanos - System.nanoTime()) / 1_000_000L);
  }

  /**
   * PROTOCOL §13: the peer left calls unanswered (or unread). It is down: waiting calls fail now, new ones at once,
   * and the probe loop runs until one is answered.
   */
  private void unanswered(String reason) {
    lastError = "unanswered: " + reason;
    metrics.peerUp(serverLogin, false);
    if (!down) {
      down = true;
      LOG.info("peer down: calls towards it fail at once until a probe is answered [url: {}]: {}", url, reason);
    }
    calls.failWaiting(this::unansweredFailure);
    scheduleProbe();
  }

  /** The next probe after its delay; without a socket the reconnect loop runs, and its connection probes. */
  private void scheduleProbe() {
    if (closed || probeTimer >= 0 || !probe.holdsDown()) {
      return;
    }
    probeIn(Backoff.jitter(probe.nextDelayMs()));
  }

  private void probeIn(long delayMs) {
    probeDueNanos = System.nanoTime() + delayMs * 1_000_000L;
    probeTimer = vertx.setTimer(Math.max(1, delayMs), id -> {
      probeTimer = -1;
      sendProbe();
    });
  }

  private void sendProbe() {
    if (!closed && probe.holdsDown() && socket != null) {
      LOG.debug("probing a peer that left calls unanswered [url: {}, op: {}]", url, probe.op());
      calls.send(socket, probe.op(), probe.payload(), callTimeoutMs, true).onFailure(failure -> scheduleProbe());
    }
  }

  /** A call of ours was answered: a peer held down is up again, and the rows waiting for it get an extra attempt. */
  private void answersAgain() {
    if (!probe.holdsDown()) {
      return;
    }
    probe.up();
    down = false;
    lastError = null;
    metrics.peerUp(serverLogin, true);
    LOG.info("peer answers again [url: {}]", url);
    onReturn.accept(url);
  }

  /**
   * Whom a connection dials: the URL, the serverLogin that {@code peers} or a current route gives for it, the
   * server-session version it speaks, whether it is a configured peer, and whether a session may run over plain ws.
   */
  record Target(String url, String serverLogin, PeerProtocol protocol, boolean configured, boolean insecure) {
  }
}
