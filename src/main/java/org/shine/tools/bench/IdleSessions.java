package org.shine.tools.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.KeyFile;
import org.shine.server.util.Json;
import org.shine.server.util.WsUrls;

/**
 * Many WebSocket sessions of the load generator that log in and then stay idle (the client answers the server's
 * pings, as Vert.x does by itself). Unlike {@code ShineClient}, which makes a WebSocket client of its own for each
 * connection, one client per loopback source address holds {@code perAddress} connections, so that ten thousand
 * sessions cost the load generator little and no address passes {@code limits.maxConnectionsPerIp} when it is set.
 */
final class IdleSessions implements AutoCloseable {
  /** The loopback source addresses taken in turn: 127.3.0.1, 127.3.0.2, ... (the Registrar uses 127.1.x.y). */
  private static final String ADDRESS_PREFIX = "127.3.";
  private final Vertx vertx;
  private final String url;
  private final int perAddress;
  private final Map<String, WebSocketClient> clients = new LinkedHashMap<>();
  private final List<Session> sessions = new ArrayList<>();
  /** Sessions the server (or the network) closed. */
  final AtomicLong closed = new AtomicLong();

  IdleSessions(Vertx vertx, String url, int perAddress) {
    this.vertx = vertx;
    this.url = url;
    this.perAddress = perAddress;
  }

  /** One connection: requests one at a time (a login is two), events ignored. */
  final class Session {
    private final WebSocket socket;
    private volatile Promise<JsonNode> waiting;
    private long nextId;

    private Session(WebSocket socket) {
      this.socket = socket;
      socket.textMessageHandler(this::onFrame);
      socket.closeHandler(v -> {
        closed.incrementAndGet();
        Promise<JsonNode> open = waiting;
        if (open != null) {
          open.tryFail("connection closed");
        }
      });
    }

    /** The payload of a 200 answer; a failure naming the status and code of any other. */
    Future<JsonNode> request(String op, ObjectNode payload) {
      Promise<JsonNode> answer = Promise.promise();
      waiting = answer;
      ObjectNode frame = Json.MAPPER.createObjectNode().put("op", op).put("requestId", ++nextId);
      frame.set("payload", payload);
      socket.writeTextMessage(frame.toString()).onFailure(answer::tryFail);
      return answer.future();
    }

    /** AuthChallenge, then AuthLogin signed with {@code key} (PROTOCOL §5). */
    Future<JsonNode> login(String login, KeyFile key) {
      return request("AuthChallenge", Json.MAPPER.createObjectNode().put("login", login)).compose(challenge -> {
        byte[] signature = Ed25519Signer.sign(key.privateKey(), ("SHiNE_AUTH|" + challenge.path("serverLogin")
            .asText() + "|" + challenge.path("challengeB64").asText()).getBytes(StandardCharsets.UTF_8));
        return request("AuthLogin", Json.MAPPER.createObjectNode().put("login", login)
            .put("signatureB64", Base64.getEncoder().encodeToString(signature)));
      });
    }

    private void onFrame(String text) {
      JsonNode frame;
      try {
        frame = Json.MAPPER.readTree(text);
      } catch (Exception e) {
        return;
      }
      Promise<JsonNode> open = waiting;
      if (!frame.has("requestId") || open == null) {
        return;
      }
      waiting = null;
      if (frame.path("status").asInt() == 200) {
        open.tryComplete(frame.path("payload"));
      } else {
        open.tryFail(frame.path("status").asInt() + " " + frame.path("error").path("code").asText() + ": "
            + frame.path("error").path("message").asText());
      }
    }
  }

  /**
   * Opens {@code count} connections and logs each in as it opens ({@code login}: the session's index → its login), at
   * most {@code inFlight} at a time, as a crowd of clients reconnecting would; the time of each connect (TCP and
   * WebSocket handshake) and of each login in the histograms. Answers the failures (their messages by count).
   */
  Map<String, Integer> open(int count, int inFlight, BiFunction<Session, Integer, Future<?>> login,
      Histogram connectTook, Histogram loginTook, AtomicLong done) throws InterruptedException {
    Semaphore slots = new Semaphore(inFlight);
    Map<String, Integer> failures = new ConcurrentHashMap<>();
    List<Future<?>> all = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      slots.acquire();
      int index = i;
      WebSocketClient client = clientFor(i);
      long start = System.nanoTime();
      long[] connectedAt = new long[1];
      all.add(client.connect(WsUrls.connectOptions(url)).compose(socket -> {
        connectedAt[0] = System.nanoTime();
        connectTook.recordValue(Math.max(1, (connectedAt[0] - start) / 1_000));
        Session session = new Session(socket);
        synchronized (sessions) {
          sessions.add(session);
        }
        return login.apply(session, index);
      }).onComplete(ar -> {
        slots.release();
        done.incrementAndGet();
        if (ar.succeeded()) {
          loginTook.recordValue(Math.max(1, (System.nanoTime() - connectedAt[0]) / 1_000));
        } else {
          failures.merge(String.valueOf(ar.cause().getMessage()), 1, Integer::sum);
        }
      }));
    }
    Future.join(all).otherwiseEmpty().await();
    return failures;
  }

  /** Sessions opened. */
  int size() {
    synchronized (sessions) {
      return sessions.size();
    }
  }

  /** A histogram of microseconds for {@link #connect} and {@link #each}. */
  static Histogram micros() {
    return new ConcurrentHistogram(3);
  }

  /** Source addresses the connections came from. */
  int addresses() {
    return clients.size();
  }

  private WebSocketClient clientFor(int index) {
    int n = index / perAddress;
    String address = ADDRESS_PREFIX + (n / 250 % 250) + "." + (n % 250 + 1);
    return clients.computeIfAbsent(address, a -> vertx.createWebSocketClient(new WebSocketClientOptions()
        .setLocalAddress(a).setMaxConnections(perAddress).setConnectTimeout(30_000)));
  }

  @Override
  public void close() {
    List<Future<?>> closing = new ArrayList<>();
    synchronized (sessions) {
      sessions.forEach(s -> closing.add(s.socket.close()));
    }
    Future.join(closing).otherwiseEmpty().await();
    clients.values().forEach(WebSocketClient::close);
    clients.clear();
    sessions.clear();
  }
}
