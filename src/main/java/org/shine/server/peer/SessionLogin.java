package org.shine.server.peer;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocket;
import java.util.Objects;
import java.util.function.Consumer;
import org.shine.server.config.AppConfig.PeerProtocol;
import org.shine.server.util.Backoff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server session on a peer connection's current socket (PROTOCOL §6a v3): logged in at once when the transport
 * allows a session ({@link CallerHandshake}), a refusal retried on the same socket with a backoff, and the answer to
 * whether calls that need a session may go — after a login, or at once to a configured {@code "protocol": "v1"} peer
 * (it knows no login and syncs without one). Each session that opens is reported ({@code onSession}: sync pulls).
 * Confined to the connection's event loop.
 */
final class SessionLogin {
  private static final Logger LOG = LoggerFactory.getLogger(SessionLogin.class);
  private static final long BACKOFF_START_MS = 250;

  /** What the peer made of our login. */
  enum Login { AUTHENTICATED, REFUSED, NOT_SUPPORTED }

  private final Vertx vertx;
  private final CallerHandshake handshake;
  private final String url;
  private final String serverLogin;
  private final PeerProtocol protocol;
  private final Backoff retries;
  private final Consumer<String> onSession;
  private WebSocket socket;
  private Login login;
  /** The login in progress on the current socket (completed once it has an outcome). */
  private Future<Login> loggingIn = Future.succeededFuture(Login.REFUSED);
  /** Why there is no session on the current socket (null: there is one, or none was tried yet). */
  private String problem;
  private long timer = -1;

  SessionLogin(Vertx vertx, CallerHandshake handshake, PeerConnection.Target target, long maxBackoffMs,
      Consumer<String> onSession) {
    this.vertx = Objects.requireNonNull(vertx);
    this.handshake = Objects.requireNonNull(handshake);
    this.url = target.url();
    this.serverLogin = target.serverLogin();
    this.protocol = target.protocol();
    this.retries = Backoff.retries(BACKOFF_START_MS, maxBackoffMs);
    this.onSession = Objects.requireNonNull(onSession);
  }

  /**
   * A new socket: logs in on it through {@code calls} when {@code allowed} (PROTOCOL §6a v3 step 2: TLS, loopback or
   * an insecure peer), else only says why there is no session.
   */
  void start(WebSocket ws, CallWindow calls, long timeoutMs, boolean allowed) {
    socket = ws;
    login = null;
    problem = null;
    if (allowed) {
      logIn(ws, calls, timeoutMs);
    } else {
      login = Login.REFUSED;
      problem = "no server session over plain ws:// to a non-loopback address (use wss://, or peers[].insecure)";
      loggingIn = Future.succeededFuture(Login.REFUSED);
      LOG.warn("peer connected for the open ops only: {} [url: {}]", problem, url);
    }
  }

  /** The socket is gone. */
  void stop() {
    socket = null;
    login = null;
  }

  /** The connection is closed for good: no retry. */
  void close() {
    stop();
    if (timer >= 0) {
      vertx.cancelTimer(timer);
      timer = -1;
    }
  }

  /** Completes once the login on the current socket has an outcome. */
  Future<Void> settled() {
    return loggingIn.mapEmpty();
  }

  /** True while the peer has accepted our server login on the current socket. */
  boolean authenticated() {
    return socket != null && login == Login.AUTHENTICATED;
  }

  /** True while calls that need a server session may go. */
  boolean ready() {
    return login == Login.AUTHENTICATED || (login == Login.NOT_SUPPORTED && protocol == PeerProtocol.V1);
  }

  /** Why there is no session now, for the admin API and refusals (null when there is one). */
  String problem() {
    return problem;
  }

  private void logIn(WebSocket ws, CallWindow calls, long timeoutMs) {
    loggingIn = handshake.logIn((op, payload) -> calls.send(ws, op, payload, timeoutMs, false), url, serverLogin,
            protocol)
        .map(outcome -> {
          if (socket != ws) {
            return outcome.login();
          }
          login = outcome.login();
          if (login == Login.AUTHENTICATED) {
            problem = null;
            retries.reset();
            LOG.info("peer authenticated: server session open [serverLogin: {}, url: {}]", serverLogin, url);
            onSession.accept(url);
          } else if (login == Login.NOT_SUPPORTED) {
            if (protocol == PeerProtocol.V1) {
              onSession.accept(url);
            } else {
              problem = "the peer knows no server login: open ops only";
            }
          } else {
            problem = outcome.reason();
            retry(ws, calls, timeoutMs);
          }
          return login;
        })
        .onFailure(failure -> {
          if (socket == ws) {
            // the connection itself failed while logging in (timeout, 503): start again on a fresh one
            ws.close();
          }
        })
        .otherwise(Login.REFUSED);
  }

  private void retry(WebSocket ws, CallWindow calls, long timeoutMs) {
    if (timer >= 0) {
      return;
    }
    retries.failed(System.nanoTime());
    timer = vertx.setTimer(retries.jitteredDelayMs(), id -> {
      timer = -1;
      if (socket == ws) {
        logIn(ws, calls, timeoutMs);
      }
    });
  }
}
