package org.shine.server.support;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicBoolean;
import org.shine.server.config.AppConfig;
import org.shine.server.config.ConfigLoader;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.node.ServerNode;
import org.shine.server.node.ShineServer;
import org.shine.server.util.Json;

/**
 * A real server node in-process, on its own Vertx (so its event bus is its own), a free loopback port and the
 * given database. Config overrides are JSON merged over the defaults exactly as a config file would be.
 */
public final class TestServer implements AutoCloseable {
  /** Ports handed to test servers: below the ephemeral range, so no outgoing connection takes one meanwhile. */
  private static final int PORT_LOW = 20_000;
  private static final int PORT_HIGH = 32_000;
  /** Where this JVM starts in that range (another JVM running tests at once most likely starts elsewhere). */
  private static final int PORT_BASE = ThreadLocalRandom.current().nextInt(PORT_HIGH - PORT_LOW);
  private static final AtomicInteger NEXT_PORT = new AtomicInteger();
  private final Vertx vertx;
  private final AppConfig config;
  private final ShineServer server;
  private final AtomicBoolean stopped = new AtomicBoolean();
  private final AtomicBoolean closed = new AtomicBoolean();

  private TestServer(Vertx vertx, AppConfig config, ShineServer server) {
    this.vertx = vertx;
    this.config = config;
    this.server = server;
  }

  public static TestServer start(String serverLogin, AppConfig.Db db, Clock clock, String overridesJson) {
    return start(serverLogin, db, clock, json(overridesJson), freePort());
  }

  /** On a given port, e.g. to bring a stopped server back where its peers expect it. */
  public static TestServer start(String serverLogin, AppConfig.Db db, Clock clock, String overridesJson, int port) {
    return start(serverLogin, db, clock, json(overridesJson), port);
  }

  /**
   * Starts {@code serverLogin} on {@code port} with {@code overrides} merged over the test defaults as by
   * {@link #merge}: a section the overrides name only in part keeps the rest of the defaults.
   */
  public static TestServer start(String serverLogin, AppConfig.Db db, Clock clock, ObjectNode overrides, int port) {
    var root = Json.MAPPER.createObjectNode();
    root.put("serverLogin", serverLogin);
    root.putObject("http").put("host", "127.0.0.1").put("port", port);
    root.put("publicUrl", "ws://127.0.0.1:" + port + "/ws");
    root.set("db", Json.MAPPER.valueToTree(db));
    // a local federation lives on loopback (PROTOCOL §13): every test server may dial 127.0.0.0/8, nothing else
    root.putObject("egress").putArray("allowCidrs").add("127.0.0.0/8");
    root = merge(root, overrides);
    // the fixture registers users of other servers (and of stubs and dead routes) on a server directly, which
    // directory.registration "served", the default, refuses (PROTOCOL §13), and all of them from 127.0.0.1, which
    // limits.cardsPerIpPerMin (30) would refuse after a few users: unless a test names them, test servers take any
    // card from anywhere (AdmissionIT tests both)
    if (!root.has("directory")) {
      root.putObject("directory").put("registration", "open");
    }
    ObjectNode limits = root.has("limits") ? (ObjectNode) root.get("limits") : root.putObject("limits");
    if (!limits.has("cardsPerIpPerMin")) {
      limits.put("cardsPerIpPerMin", 1_000_000);
    }
    AppConfig config = ConfigLoader.parse(root.toString(), Map.of());
    ShineMetrics metrics = ShineMetrics.forNode(config.serverLogin(), config.metrics().enabled());
    Vertx vertx = ServerNode.vertx(config, metrics).await();
    ShineServer server = new ShineServer(vertx, config, clock, metrics);
    try {
      server.start().await();
    } catch (RuntimeException e) {
      vertx.close().await();
      throw e;
    }
    return new TestServer(vertx, config, server);
  }

  /**
   * Config overrides naming {@code loginsAndPorts} (serverLogin, port, serverLogin, port, ...) as configured peers
   * on loopback: {@code {"peers":[...]}}.
   */
  public static ObjectNode peers(Object... loginsAndPorts) {
    var root = Json.MAPPER.createObjectNode();
    var peers = root.putArray("peers");
    for (int i = 0; i < loginsAndPorts.length; i += 2) {
      peers.addObject().put("serverLogin", (String) loginsAndPorts[i])
          .put("url", "ws://127.0.0.1:" + loginsAndPorts[i + 1] + "/ws");
    }
    return root;
  }

  /**
   * Config overrides naming {@code loginsAndUrls} (serverLogin, WebSocket URL, ...) as configured peers:
   * {@code {"peers":[...]}}, e.g. for a stub or a server of another world.
   */
  public static ObjectNode peersAt(String... loginsAndUrls) {
    var root = Json.MAPPER.createObjectNode();
    var peers = root.putArray("peers");
    for (int i = 0; i < loginsAndUrls.length; i += 2) {
      peers.addObject().put("serverLogin", loginsAndUrls[i]).put("url", loginsAndUrls[i + 1]);
    }
    return root;
  }

  /** Config overrides that turn the admin API on at 127.0.0.1:{@code port}: {@code {"admin":{...}}}. */
  public static ObjectNode admin(int port) {
    var root = Json.MAPPER.createObjectNode();
    root.putObject("admin").put("host", "127.0.0.1").put("port", port);
    return root;
  }

  /** {@code overridesJson} (a JSON object) as an object to merge or extend. */
  public static ObjectNode json(String overridesJson) {
    try {
      if (Json.MAPPER.readTree(overridesJson) instanceof ObjectNode object) {
        return object;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    throw new IllegalArgumentException("config overrides must be a JSON object: " + overridesJson);
  }

  /**
   * {@code layers} merged in order into a new object, as config files over each other: an object merges into the
   * object it meets, key by key, at any depth; any other value (an array, a number, ...) replaces what was there.
   * No layer is changed.
   */
  public static ObjectNode merge(ObjectNode... layers) {
    ObjectNode merged = Json.MAPPER.createObjectNode();
    for (ObjectNode layer : layers) {
      mergeInto(merged, layer);
    }
    return merged;
  }

  private static void mergeInto(ObjectNode target, ObjectNode layer) {
    layer.properties().forEach(e -> {
      if (e.getValue() instanceof ObjectNode object && target.get(e.getKey()) instanceof ObjectNode existing) {
        mergeInto(existing, object);
      } else {
        target.set(e.getKey(), e.getValue().deepCopy());
      }
    });
  }

  public static TestServer start(String serverLogin, AppConfig.Db db, Clock clock) {
    return start(serverLogin, db, clock, "{}");
  }

  public int port() {
    return config.http().port();
  }

  public String url() {
    return config.publicUrl();
  }

  public String serverLogin() {
    return config.serverLogin();
  }

  public AppConfig config() {
    return config;
  }

  public Vertx vertx() {
    return vertx;
  }

  /** A connection to {@code target} logged in as this server, as its peer connections are (PROTOCOL §6a). */
  public org.shine.server.client.ShineClient serverSession(Vertx clientVertx, TestServer target) {
    var client = org.shine.server.client.ShineClient.connect(clientVertx, target.url()).await();
    client.serverLogin(serverLogin(), target.serverLogin(), (url, challengeB64) -> server.identity()
            .signLoginV3(target.serverLogin(), url, challengeB64))
        .await();
    return client;
  }

  /** Drains as SIGTERM does: the gateway finishes in-flight requests, then everything stops. */
  public io.vertx.core.Future<Void> drain() {
    stopped.set(true);
    return server.stop();
  }

  /** Stops the node; a second call does nothing (a test may stop a server its fixture also closes at the end). */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    if (stopped.compareAndSet(false, true)) {
      server.stop().await();
    }
    vertx.close().await();
  }

  /** True once {@link #close()} has been called. */
  public boolean closed() {
    return closed.get();
  }

  public static int freePort() {
    // below the kernel's ephemeral range (32768-60999 on Linux): a port handed out here and bound a little later
    // (a server declared before it starts, which its peers already dial) is never taken meanwhile as the source port
    // of some outgoing connection, and a dial to it can never connect to itself
    for (int i = 0; i < PORT_HIGH - PORT_LOW; i++) {
      int port = PORT_LOW + (PORT_BASE + NEXT_PORT.getAndIncrement()) % (PORT_HIGH - PORT_LOW);
      try (ServerSocket socket = new ServerSocket()) {
        socket.bind(new InetSocketAddress("127.0.0.1", port));
        return port;
      } catch (IOException taken) {
        // try the next one
      }
    }
    throw new IllegalStateException("no free loopback port in " + PORT_LOW + ".." + PORT_HIGH);
  }
}
