package org.shine.server.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.ServerWebSocket;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.KeyFile;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.peer.ServerIdentity;
import org.shine.server.util.Challenges;
import org.shine.server.util.Json;

/**
 * A fake access server on a loopback port: answers each request with what {@link #respond} returns for its op
 * and payload (a payload for 200, or an {@link Error}), and records every request it gets. It has a server key of
 * its own, served at {@code /.well-known/shine-server} under the serverLogin given by {@link #named}, so it can log
 * in to real servers as a peer would ({@link #sessionOn}).
 */
public final class StubPeer implements AutoCloseable {
  private final Vertx vertx;
  private final HttpServer server;
  private final List<Request> requests = new CopyOnWriteArrayList<>();
  private final List<ServerWebSocket> sockets = new CopyOnWriteArrayList<>();
  private final AtomicInteger accepted = new AtomicInteger();
  private final AtomicInteger keyFetches = new AtomicInteger();
  private volatile boolean keyHidden;
  private final Map<String, BiFunction<String, JsonNode, Object>> byOp = new ConcurrentHashMap<>();
  private volatile BiFunction<String, JsonNode, Object> fallback = (op, payload) -> new Error(400, "UNKNOWN_OP", op);
  private volatile KeyFile serverKey = KeyFile.generate(null);
  private static final AtomicInteger HOSTS = new AtomicInteger();
  private final String host;
  private volatile String serverLogin;
  private volatile boolean readsPaused;

  private StubPeer(Vertx vertx, HttpServer server, String host) {
    this.vertx = vertx;
    this.server = server;
    this.host = host;
    this.serverLogin = host;
  }

  /**
   * On a loopback address of its own (127.1.x.y), so that its default serverLogin, that address, is a route name any
   * server accepts (PROTOCOL §6a v3: a route not configured as a peer is named after its URL's host).
   */
  public static StubPeer start(Vertx vertx) {
    return start(vertx, 0, nextHost());
  }

  /** On 127.0.0.1:{@code port}: where a test server is expected, standing in for it. */
  public static StubPeer start(Vertx vertx, int port) {
    return start(vertx, port, "127.0.0.1");
  }

  /** On {@code host} (a loopback address). */
  public static StubPeer start(Vertx vertx, int port, String host) {
    StubPeer[] holder = new StubPeer[1];
    HttpServer server = vertx.createHttpServer().webSocketHandler(ws -> holder[0].accept(ws))
        .requestHandler(request -> holder[0].serveHttp(request));
    holder[0] = new StubPeer(vertx, server, host);
    server.listen(port, host).await();
    return holder[0];
  }

  /** A loopback address no other stub of this JVM has: 127.1.0.1, 127.1.0.2, ... */
  public static String nextHost() {
    int n = HOSTS.getAndIncrement();
    return "127.1." + (n / 250 % 250) + "." + (n % 250 + 1);
  }

  public String url() {
    return "ws://" + host + ":" + server.actualPort() + "/ws";
  }

  /** The loopback address it listens on. */
  public String host() {
    return host;
  }

  public int port() {
    return server.actualPort();
  }

  /**
   * Sets the answer for one op: an ObjectNode payload (200), an {@link Error}, or a Future of either (answered
   * when it completes; a Future that never completes leaves the request unanswered).
   */
  public StubPeer respond(String op, BiFunction<String, JsonNode, Object> answer) {
    byOp.put(op, answer);
    return this;
  }

  /**
   * The serverLogin this stub claims in its key document and its logins (by default its host, a name any server
   * accepts in a route; another name is accepted only where the stub is a configured peer).
   */
  public StubPeer named(String serverLogin) {
    this.serverLogin = serverLogin;
    return this;
  }

  public String serverLogin() {
    return serverLogin;
  }

  /** This stub's server key. */
  public KeyFile serverKey() {
    return serverKey;
  }

  /** Takes a new server key (served from now on), as a server whose key changed would. */
  public StubPeer rotateKey() {
    serverKey = KeyFile.generate(null);
    return this;
  }

  /**
   * A connection to {@code connectUrl} logged in as this stub's server to {@code callee}, the login bound to
   * {@code boundUrl} (the URL a caller dialed: another name of the same server, such as an alias behind a proxy).
   */
  public ShineClient sessionOnVia(Vertx clientVertx, String connectUrl, String boundUrl, String callee) {
    ShineClient client = ShineClient.connect(clientVertx, connectUrl).await();
    JsonNode challenge = client.request("ServerAuthChallenge", ShineClient.object().put("serverLogin", serverLogin)
        .put("expectedServerLogin", callee).put("nonceB64", Base64.getEncoder().encodeToString(new byte[32])))
        .await();
    byte[] signature = Ed25519Signer.sign(serverKey.privateKey(), ServerIdentity.loginBytesV3(callee, serverLogin,
        boundUrl, challenge.get("challengeB64").asText()));
    client.request("ServerAuthLogin", ShineClient.object().put("serverLogin", serverLogin).put("url", boundUrl)
        .put("signatureB64", Base64.getEncoder().encodeToString(signature))).await();
    return client;
  }

  /** A connection to {@code targetUrl} logged in as this stub's server (PROTOCOL §6a v3). */
  public ShineClient sessionOn(Vertx clientVertx, String targetUrl) {
    ShineClient client = ShineClient.connect(clientVertx, targetUrl).await();
    client.serverLogin(serverLogin, serverKey.privateKey()).await();
    return client;
  }

  /** Key documents asked for so far. */
  public int keyFetches() {
    return keyFetches.get();
  }

  /** From now on the key document answers 404 with a text a caller must never see ({@code false}: served again). */
  public StubPeer hideKey(boolean hidden) {
    keyHidden = hidden;
    return this;
  }

  private void serveHttp(io.vertx.core.http.HttpServerRequest request) {
    if ("/.well-known/shine-server".equals(request.path())) {
      keyFetches.incrementAndGet();
      if (keyHidden) {
        request.response().setStatusCode(404).end("secret-internal-detail");
        return;
      }
      request.response().putHeader("content-type", "application/json").end(Json.MAPPER.createObjectNode()
          .put("serverLogin", serverLogin).put("publicKeyB64", serverKey.publicKeyB64()).put("url", url())
          .toString());
    } else {
      request.response().setStatusCode(404).end();
    }
  }

  /**
   * The answer of a v3 server to ServerAuthChallenge (PROTOCOL §6a): 421 WRONG_SERVER for another expected name, else
   * this stub's name, a fresh challenge and its hello signed with its key. (A stub takes any ServerAuthLogin.)
   */
  public Object hello(JsonNode challenge) {
    return hello(challenge, Challenges.newChallengeB64());
  }

  /** As {@link #hello(JsonNode)} with a challenge of the caller's choice (e.g. one another server issued). */
  public Object hello(JsonNode challenge, String challengeB64) {
    String expected = challenge.path("expectedServerLogin").asText("");
    if (!expected.equals(serverLogin)) {
      return new Error(421, "WRONG_SERVER", "this stub is " + serverLogin);
    }
    byte[] hello = ServerIdentity.helloBytes(serverLogin, challenge.path("serverLogin").asText(),
        challenge.path("nonceB64").asText(), challengeB64);
    return Json.MAPPER.createObjectNode().put("serverLogin", serverLogin).put("challengeB64", challengeB64)
        .put("signatureB64", Base64.getEncoder().encodeToString(
            Ed25519Signer.sign(serverKey.privateKey(), hello)));
  }

  public StubPeer acceptEverything() {
    fallback = (op, payload) -> Json.MAPPER.createObjectNode();
    return this;
  }

  public List<Request> requests() {
    return List.copyOf(requests);
  }

  public long count(String op) {
    return requests.stream().filter(r -> r.op().equals(op)).count();
  }

  @Override
  public void close() {
    server.close().await();
  }

  /** WebSocket connections this stub has accepted since it started. */
  public int connectionsAccepted() {
    return accepted.get();
  }

  /** WebSocket connections open now. */
  public int openConnections() {
    return sockets.size();
  }

  /**
   * Stops reading from its connections, open ones and those to come, as a peer that never reads would: what a
   * server writes to it piles up in the kernel's buffers, then in the server's.
   */
  public StubPeer pauseReads() {
    readsPaused = true;
    sockets.forEach(ServerWebSocket::pause);
    return this;
  }

  private void accept(ServerWebSocket ws) {
    accepted.incrementAndGet();
    if (readsPaused) {
      ws.pause();
    }
    sockets.add(ws);
    ws.closeHandler(v -> sockets.remove(ws));
    ws.textMessageHandler(text -> {
      JsonNode frame;
      try {
        frame = Json.MAPPER.readTree(text);
      } catch (Exception e) {
        return;
      }
      String op = frame.path("op").asText();
      JsonNode payload = frame.path("payload");
      requests.add(new Request(op, payload, System.currentTimeMillis()));
      BiFunction<String, JsonNode, Object> handler = byOp.get(op);
      Object answer = handler != null ? handler.apply(op, payload)
          : op.equals("ServerAuthChallenge") ? hello(payload)
          : op.equals("ServerAuthLogin") ? Json.MAPPER.createObjectNode().put("serverLogin",
              payload.path("serverLogin").asText())
          : fallback.apply(op, payload);
      if (answer instanceof io.vertx.core.Future<?> later) {
        later.onComplete(ar -> {
          if (!ws.isClosed()) {
            ws.writeTextMessage(render(op, frame, ar.succeeded() ? ar.result()
                : new Error(500, "INTERNAL", String.valueOf(ar.cause()))));
          }
        });
        return;
      }
      ws.writeTextMessage(render(op, frame, answer));
    });
  }

  private static String render(String op, JsonNode frame, Object answer) {
      ObjectNode response = Json.MAPPER.createObjectNode().put("op", op);
      response.set("requestId", frame.get("requestId"));
      if (answer instanceof Error error) {
        response.put("status", error.status());
        response.putObject("error").put("code", error.code()).put("message", error.message());
      } else {
        response.put("status", 200);
        response.set("payload", (JsonNode) answer);
      }
      return response.toString();
  }

  /**
   * Writes {@code event} (an {@code op} and a {@code payload}, no requestId) to every open connection, as an access
   * server pushes events to its users' sessions; answers how many connections got it.
   */
  public int push(JsonNode event) {
    sockets.forEach(ws -> ws.writeTextMessage(event.toString()));
    return sockets.size();
  }

  /** Drops every open connection (the server keeps listening). */
  public void dropConnections() {
    sockets.forEach(ServerWebSocket::close);
  }

  /** One request the stub received. */
  public record Request(String op, JsonNode payload, long atMs) {
  }

  /** An error response. */
  public record Error(int status, String code, String message) {
  }

  /** The vertx the stub runs on. */
  public Vertx vertx() {
    return vertx;
  }
}
