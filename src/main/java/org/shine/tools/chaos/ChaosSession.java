package org.shine.tools.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.dm.KeyFile;

/**
 * A user's logged-in session that outlives its connections: when one closes (a server killed, a node gone) it
 * connects again, to the next of its URLs (the nodes of one server), and logs in again. Each connection is a new
 * session with a new id, which is what "pushed twice to one session" counts against.
 */
final class ChaosSession {
  private static final long RECONNECT_MS = 250;
  private static final long LOGIN_TIMEOUT_MS = 10_000;
  private static final AtomicLong SESSION_IDS = new AtomicLong();

  /** Receives the server's pushes with the id of the session they came on. */
  interface Events {
    void on(long sessionId, JsonNode frame);
  }

  private final Vertx vertx;
  private final List<String> urls;
  private final String login;
  private final KeyFile key;
  private final Events events;
  private final AtomicLong reconnects = new AtomicLong();
  private volatile ShineClient current;
  private volatile Promise<ShineClient> ready = Promise.promise();
  private volatile boolean stopped;
  private int next;

  ChaosSession(Vertx vertx, List<String> urls, String login, KeyFile key, Events events) {
    this.vertx = vertx;
    this.urls = List.copyOf(urls);
    this.login = login;
    this.key = key;
    this.events = events;
  }

  /** Starts connecting; the future completes at the first login. */
  Future<ShineClient> start(int firstUrl) {
    next = firstUrl;
    Future<ShineClient> first = ready.future();
    connect();
    return first;
  }

  /** Connections that were opened again after a close or a failed attempt. */
  long reconnects() {
    return reconnects.get();
  }

  /**
   * Sends a request on the current connection (waiting for one while reconnecting); fails with code
   * {@code TIMEOUT} when no answer comes within {@code timeoutMs}.
   */
  Future<JsonNode> request(String op, JsonNode payload, long timeoutMs) {
    Promise<JsonNode> answer = Promise.promise();
    long timer = vertx.setTimer(timeoutMs, id -> answer.tryFail(new ShineClientException(0, "TIMEOUT",
        "no answer in " + timeoutMs + " ms")));
    ready.future().compose(client -> client.request(op, payload)).onComplete(ar -> {
      vertx.cancelTimer(timer);
      if (ar.succeeded()) {
        answer.tryComplete(ar.result());
      } else {
        answer.tryFail(ar.cause());
      }
    });
    return answer.future();
  }

  void stop() {
    stopped = true;
    ShineClient client = current;
    if (client != null) {
      client.close();
    }
  }

  private void connect() {
    if (stopped) {
      return;
    }
    String url = urls.get(Math.floorMod(next++, urls.size()));
    long sessionId = SESSION_IDS.incrementAndGet();
    ShineClient.connect(vertx, url)
        .compose(client -> {
          AtomicBoolean closed = new AtomicBoolean();
          client.onEvent(frame -> events.on(sessionId, frame));
          client.onClose(() -> {
            if (closed.compareAndSet(false, true)) {
              onClosed(client);
            }
          });
          // a login that hangs (a database away) is given up: the close connects again
          vertx.setTimer(LOGIN_TIMEOUT_MS, id -> {
            if (current != client) {
              client.close();
            }
          });
          // a refused login closes the connection, and its close handler connects again
          return client.login(login, key).map(v -> client).onFailure(e -> client.close());
        })
        .onSuccess(client -> {
          current = client;
          ready.tryComplete(client);
        })
        .onFailure(e -> {
          if (!(e instanceof ShineClientException)) {
            retryLater();
          }
        });
  }

  private void onClosed(ShineClient client) {
    if (current == client) {
      current = null;
      // requests made from now on wait for the next connection
      ready = Promise.promise();
    }
    retryLater();
  }

  private void retryLater() {
    if (stopped) {
      return;
    }
    reconnects.incrementAndGet();
    vertx.setTimer(RECONNECT_MS, id -> connect());
  }
}
