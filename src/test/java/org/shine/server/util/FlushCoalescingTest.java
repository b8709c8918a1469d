package org.shine.server.util;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.internal.http.WebSocketInternal;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@link FlushCoalescing} on real sockets: the flushes that reach the socket are counted by a handler between the
 * coalescing and the socket, and every frame must still arrive, in order, without another write after it.
 */
class FlushCoalescingTest {
  private static final int FRAMES = 20;
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() {
    vertx.close().await();
  }

  @Test
  @DisplayName("frames written in one run of the event loop leave in one flush, and all of them arrive in order")
  void oneRunOneFlush() throws Exception {
    Written written = writeInOneRun(true);

    assertThat(written.received()).containsExactlyElementsOf(expected());
    assertThat(written.flushes()).isEqualTo(1);
  }

  @Test
  @DisplayName("without it each frame is a flush of its own (the count above is the coalescing's, not the bench's)")
  void withoutItEachFrameFlushes() throws Exception {
    Written written = writeInOneRun(false);

    assertThat(written.received()).containsExactlyElementsOf(expected());
    assertThat(written.flushes()).isEqualTo(FRAMES);
  }

  @Test
  @DisplayName("a client socket takes it too, once however often it is installed, and a lone frame is not held")
  void clientSocketOnce() throws Exception {
    List<String> received = new CopyOnWriteArrayList<>();
    HttpServer server = vertx.createHttpServer()
        .webSocketHandler(ws -> ws.textMessageHandler(text -> ws.writeTextMessage("echo " + text)))
        .listen(0, "127.0.0.1").await();
    WebSocketClient client = vertx.createWebSocketClient(new WebSocketClientOptions());
    WebSocket ws = client.connect(new WebSocketConnectOptions().setHost("127.0.0.1").setPort(server.actualPort())
        .setURI("/")).await();
    Promise<Void> echoed = Promise.promise();
    ws.textMessageHandler(text -> {
      received.add(text);
      echoed.tryComplete();
    });

    assertThat(FlushCoalescing.install(ws)).isTrue();
    assertThat(FlushCoalescing.install(ws)).isTrue();
    long handlers = ((WebSocketInternal) ws).channelHandlerContext().pipeline().names().stream()
        .filter(FlushCoalescing.HANDLER::equals).count();
    assertThat(handlers).isEqualTo(1);
    vertx.setTimer(1, id -> ws.writeTextMessage("one"));
    echoed.future().await(10, TimeUnit.SECONDS);
    assertThat(received).containsExactly("echo one");
  }

  private record Written(List<String> received, int flushes) {
  }

  /** A server socket writes {@link #FRAMES} frames in one task outside any read; the client counts what comes. */
  private Written writeInOneRun(boolean coalesce) throws Exception {
    AtomicInteger flushes = new AtomicInteger();
    Promise<Void> ready = Promise.promise();
    HttpServer server = vertx.createHttpServer().webSocketHandler((ServerWebSocket ws) -> {
      if (coalesce) {
        assertThat(FlushCoalescing.install(ws)).isTrue();
      }
      // first in the pipeline, so it sees only the flushes that pass the coalescing on to the socket
      ((WebSocketInternal) ws).channelHandlerContext().pipeline().addFirst(new ChannelOutboundHandlerAdapter() {
        @Override
        public void flush(ChannelHandlerContext ctx) {
          flushes.incrementAndGet();
          ctx.flush();
        }
      });
      // once the client listens; a timer runs outside the read that delivered "go": each write would flush at once
      ws.textMessageHandler(go -> vertx.setTimer(1, id -> {
        for (String frame : expected()) {
          ws.writeTextMessage(frame);
        }
      }));
    }).listen(0, "127.0.0.1").await();
    List<String> received = new CopyOnWriteArrayList<>();
    WebSocketClient client = vertx.createWebSocketClient(new WebSocketClientOptions());
    WebSocket ws = client.connect(new WebSocketConnectOptions().setHost("127.0.0.1").setPort(server.actualPort())
        .setURI("/")).await();
    ws.textMessageHandler(text -> {
      received.add(text);
      if (received.size() == FRAMES) {
        ready.tryComplete();
      }
    });
    ws.writeTextMessage("go");
    ready.future().await(10, TimeUnit.SECONDS);
    return new Written(List.copyOf(received), flushes.get());
  }

  private static List<String> expected() {
    return IntStream.range(0, FRAMES).mapToObj(i -> "frame " + i).toList();
  }
}
