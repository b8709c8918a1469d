package org.shine.tools.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.ServerWebSocket;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.shine.server.util.Json;

/**
 * The other end of a flood (issue 16, attack 3): a WebSocket listener on a loopback address of its own that takes
 * a server's connections as a v1 server would (every op but {@code ReceiveIncomingMessage} is answered 400
 * {@code UNKNOWN_OP}, the login included) and either never answers {@code ReceiveIncomingMessage} (a tarpit) or
 * answers it 200 at once (the control). Counts the calls it got, and the most it got within any span of the
 * server's call timeout: what it held at most, since the server gives up on a call after that.
 */
final class FloodPeer implements AutoCloseable {
  private static final String RECEIVE = "ReceiveIncomingMessage";
  private final HttpServer server;
  private final String host;
  private final boolean answers;
  private final long spanNanos;
  private final LongAdder calls = new LongAdder();
  private final AtomicInteger connections = new AtomicInteger();
  /** Calls received per 100 ms bucket since the start, for the busiest span. */
  private final Map<Long, LongAdder> buckets = new ConcurrentHashMap<>();
  private final long startNanos = System.nanoTime();
  private final AtomicLong lastBucket = new AtomicLong();

  private FloodPeer(HttpServer server, String host, boolean answers, long spanMs) {
    this.server = server;
    this.host = host;
    this.answers = answers;
    this.spanNanos = TimeUnit.MILLISECONDS.toNanos(spanMs);
  }

  /** Listens on {@code host} (a loopback address), any free port; {@code answers} false makes it a tarpit. */
  static FloodPeer start(Vertx vertx, String host, boolean answers, long callTimeoutMs) {
    FloodPeer[] holder = new FloodPeer[1];
    HttpServer server = vertx.createHttpServer().webSocketHandler(ws -> holder[0].accept(ws));
    holder[0] = new FloodPeer(server, host, answers, callTimeoutMs);
    server.listen(0, host).await();
    return holder[0];
  }

  /** The name a route to it must carry (PROTOCOL §6a v3: its URL's host). */
  String serverLogin() {
    return host;
  }

  String url() {
    return "ws://" + host + ":" + server.actualPort() + "/ws";
  }

  boolean answers() {
    return answers;
  }

  long calls() {
    return calls.sum();
  }

  int connections() {
    return connections.get();
  }

  /** The most {@code ReceiveIncomingMessage} calls that arrived within one span of the call timeout. */
  long busiestSpan() {
    long width = spanNanos / TimeUnit.MILLISECONDS.toNanos(100);
    long last = lastBucket.get();
    long best = 0;
    for (long start = 0; start <= last; start++) {
      long sum = 0;
      for (long b = start; b < start + width && b <= last; b++) {
        LongAdder bucket = buckets.get(b);
        sum += bucket == null ? 0 : bucket.sum();
      }
      best = Math.max(best, sum);
    }
    return best;
  }

  @Override
  public void close() {
    server.close().await();
  }

  private void accept(ServerWebSocket ws) {
    connections.incrementAndGet();
    ws.textMessageHandler(text -> {
      JsonNode frame;
      try {
        frame = Json.MAPPER.readTree(text);
      } catch (Exception e) {
        return;
      }
      String op = frame.path("op").asText();
      ObjectNode answer = Json.MAPPER.createObjectNode().put("op", op);
      answer.set("requestId", frame.get("requestId"));
      if (!RECEIVE.equals(op)) {
        answer.put("status", 400).putObject("error").put("code", "UNKNOWN_OP").put("message", op);
        ws.writeTextMessage(answer.toString());
        return;
      }
      calls.increment();
      long bucket = (System.nanoTime() - startNanos) / TimeUnit.MILLISECONDS.toNanos(100);
      buckets.computeIfAbsent(bucket, b -> new LongAdder()).increment();
      lastBucket.accumulateAndGet(bucket, Math::max);
      if (answers) {
        answer.put("status", 200).putObject("payload");
        ws.writeTextMessage(answer.toString());
      }
    });
  }
}
