package org.shine.server.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.http.WebSocketClient;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.shine.server.util.Json;

/**
 * A WebSocket proxy on loopback in front of a real server that passes every frame both ways, except that it answers
 * the first {@code refusals} requests of {@code op} itself with the 503 {@code OVERLOADED} a server that is shutting
 * down gives (SessionKeeper's drain): the moment between a server's "no more requests" and its closing the
 * connection, held open for as long as a test needs it.
 */
public final class RefusingProxy implements AutoCloseable {
  private final HttpServer server;
  private final WebSocketClient client;
  private final AtomicInteger refused = new AtomicInteger();

  private RefusingProxy(HttpServer server, WebSocketClient client) {
    this.server = server;
    this.client = client;
  }

  public static RefusingProxy start(Vertx vertx, int upstreamPort, String op, int refusals) {
    Objects.requireNonNull(op);
    WebSocketClient client = vertx.createWebSocketClient();
    AtomicInteger left = new AtomicInteger(refusals);
    HttpServer server = vertx.createHttpServer();
    RefusingProxy proxy = new RefusingProxy(server, client);
    server.webSocketHandler(downstream -> {
      downstream.pause();
      client.connect(upstreamPort, "127.0.0.1", downstream.uri()).onComplete(ar -> {
        if (ar.failed()) {
          downstream.close();
          return;
        }
        var upstream = ar.result();
        upstream.textMessageHandler(downstream::writeTextMessage);
        upstream.closeHandler(v -> downstream.close());
        downstream.closeHandler(v -> upstream.close());
        downstream.textMessageHandler(text -> {
          JsonNode frame = read(text);
          if (op.equals(frame.path("op").asText()) && left.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            proxy.refused.incrementAndGet();
            downstream.writeTextMessage(refusal(op, frame.get("requestId")));
          } else {
            upstream.writeTextMessage(text);
          }
        });
        downstream.resume();
      });
    });
    server.listen(0, "127.0.0.1").await();
    return proxy;
  }

  private static JsonNode read(String text) {
    try {
      return Json.MAPPER.readTree(text);
    } catch (java.io.IOException notJson) {
      return Json.MAPPER.createObjectNode();
    }
  }

  /** The frame of SessionKeeper's refusal while draining. */
  private static String refusal(String op, JsonNode requestId) {
    ObjectNode frame = Json.MAPPER.createObjectNode().put("op", op);
    frame.set("requestId", requestId);
    frame.put("status", 503);
    frame.putObject("error").put("code", "OVERLOADED")
        .put("message", "server is shutting down; retry on another server or later");
    return frame.toString();
  }

  /** The chat's URL through this proxy. */
  public String url() {
    return "ws://127.0.0.1:" + server.actualPort() + "/ws";
  }

  /** How many requests this proxy has answered itself. */
  public int refused() {
    return refused.get();
  }

  @Override
  public void close() {
    server.close().await();
    client.close().await();
  }
}
