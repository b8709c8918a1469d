package org.shine.tools.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.cli.CliFailure;
import org.shine.server.support.Eventually;
import org.shine.tools.chaos.ChaosProxy.Target;

class ChaosProxyTest {
  private Vertx vertx;
  private int echoPort;

  @BeforeEach
  void echoServer() {
    vertx = Vertx.vertx();
    NetServer echo = vertx.createNetServer();
    echo.connectHandler(socket -> socket.handler(socket::write));
    echoPort = echo.listen(0, "127.0.0.1").await().actualPort();
  }

  @AfterEach
  void close() {
    vertx.close().await();
  }

  private NetSocket connect(int port, Buffer received) {
    NetSocket socket = vertx.createNetClient().connect(port, "127.0.0.1").await();
    socket.handler(received::appendBuffer);
    return socket;
  }

  @Test
  @DisplayName("bytes cross the proxy both ways in the order written, each chunk held back up to the delay")
  void relaysInOrderWithDelay() {
    ChaosProxy proxy = new ChaosProxy(vertx, 0, List.of(new Target("127.0.0.1", echoPort)), 0, 30, 1);
    int port = proxy.start().await();
    Buffer received = Buffer.buffer();
    NetSocket socket = connect(port, received);
    StringBuilder sent = new StringBuilder();
    for (int i = 0; i < 200; i++) {
      String chunk = "chunk-" + i + ";";
      sent.append(chunk);
      socket.write(chunk).await();
    }

    Eventually.until("every byte echoed through the proxy", 10_000, () -> received.length() == sent.length());

    assertThat(received.toString()).isEqualTo(sent.toString());
    assertThat(proxy.accepted()).isEqualTo(1);
    proxy.stop().await();
  }

  @Test
  @DisplayName("the proxy cuts open connections on its drop timer, on both sides, and takes new ones after")
  void dropsConnections() {
    ChaosProxy proxy = new ChaosProxy(vertx, 0, List.of(new Target("127.0.0.1", echoPort)), 100, 0, 1);
    int port = proxy.start().await();
    AtomicBoolean closed = new AtomicBoolean();
    NetSocket socket = connect(port, Buffer.buffer());
    socket.closeHandler(v -> closed.set(true));

    Eventually.until("the client's connection cut by the proxy", 5_000, closed::get);

    Eventually.until("the cut counted", 5_000, () -> proxy.dropped() >= 1);
    connect(port, Buffer.buffer());
    Eventually.until("a new connection taken after the cut", 5_000, () -> proxy.accepted() == 2);
    proxy.stop().await();
  }

  @Test
  @DisplayName("the proxy refuses a target that is not a loopback address")
  void loopbackOnly() {
    // (0.0.0.0: not loopback, and nothing is ever dialled here)
    List<Target> targets = List.of(new Target("127.0.0.1", echoPort), new Target("0.0.0.0", 80));
    assertThatThrownBy(() -> new ChaosProxy(vertx, 0, targets, 0, 0, 1))
        .isInstanceOf(CliFailure.class).hasMessageContaining("loopback");
  }

  @Test
  @DisplayName("with several targets each connection goes to the first that takes it: a node down, the next one")
  void failsOverToTheNextTarget() {
    // a port nothing listens on: one just closed
    NetServer gone = vertx.createNetServer().connectHandler(NetSocket::close);
    int closedPort = gone.listen(0, "127.0.0.1").await().actualPort();
    gone.close().await();
    ChaosProxy proxy = new ChaosProxy(vertx, 0,
        List.of(new Target("127.0.0.1", closedPort), new Target("127.0.0.1", echoPort)), 0, 0, 1);
    int port = proxy.start().await();
    Buffer received = Buffer.buffer();
    NetSocket socket = connect(port, received);

    socket.write("through the second").await();

    Eventually.until("echoed by the second target", 10_000, () -> received.length() == 18);
    assertThat(received.toString()).isEqualTo("through the second");
    assertThat(proxy.open()).isEqualTo(1);
    proxy.stop().await();
  }

  @Test
  @DisplayName("HOST:PORT targets are parsed, and anything else is a usage error")
  void parsesTargets() {
    assertThat(Target.parse("127.0.0.1:7201")).isEqualTo(new Target("127.0.0.1", 7201));
    assertThatThrownBy(() -> Target.parse("127.0.0.1")).isInstanceOf(CliFailure.class);
    assertThatThrownBy(() -> Target.parse("127.0.0.1:99999")).isInstanceOf(CliFailure.class);
  }
}
