package org.shine.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.net.SelfSignedCertificate;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.shine.server.client.ShineClient;
import org.shine.server.config.AppConfig;
import org.shine.server.config.ConfigException;
import org.shine.server.config.ConfigLoader;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.node.ServerNode;
import org.shine.server.support.Eventually;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/**
 * Clustered nodes (Hazelcast) of one deployment sharing one database: events cross nodes, cluster ports stay on
 * cluster.host, and with cluster.tls only nodes holding a trusted certificate exchange bus traffic.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class ClusterIT {
  private static final String PING = "cluster-it.ping";
  private static final String STRANGER_PING = "cluster-it.ping.stranger";
  private static final InetAddress FIRST = address("127.0.0.1");
  private static final InetAddress SECOND = address("127.0.0.2");
  private TestWorld world;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx);
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("an event for a user reaches the session on the other node of the deployment")
  void eventsCrossNodes() {
    String login = deployment();
    String clustered = "{\"cluster\":{\"enabled\":true,\"members\":[\"127.0.0.1\"],\"port\":5801}}";
    TestServer nodeA = world.server(login, clustered);
    TestServer nodeB = world.node(nodeA, clustered);
    TestUser alice = world.user("alice", nodeA);
    TestUser bob = world.user("bob", nodeA);

    JsonNode sent = sendAcross(alice, nodeA, bob, nodeB);

    assertThat(sent.get("deliveryState").asText()).isEqualTo("delivered");
    ShineClient history = world.session(bob, nodeB);
    assertThat(history.request("GetDirectMessages", ShineClient.object().put("peer", "alice")).await()
        .get("messages")).hasSize(1);
  }

  @Test
  @DisplayName("by default the Hazelcast member port and the event bus port listen on 127.0.0.1 only")
  void clusterPortsStayOnLoopbackByDefault() {
    TestServer node = world.server(deployment(), "{\"cluster\":{\"enabled\":true}}");
    assertThat(listeningAddresses(hazelcastPort(node))).as("Hazelcast member port").containsOnly(FIRST);
    assertThat(listeningAddresses(eventBusPort(node))).as("event bus port").containsOnly(FIRST);
  }

  @Test
  @DisplayName("two nodes on two addresses of cluster.host form a cluster, each listening on its own address")
  void nodesOnTwoAddressesFormACluster() {
    String login = deployment();
    TestServer nodeA = world.server(login, clustered("127.0.0.1", 5811, null));
    TestServer nodeB = world.node(nodeA, clustered("127.0.0.2", 5811, null));
    TestUser alice = world.user("alice", nodeA);
    TestUser bob = world.user("bob", nodeA);

    sendAcross(alice, nodeA, bob, nodeB);

    // both nodes may take the same port number on their own address, so a port may show both addresses
    Set<InetAddress> nodes = Set.of(FIRST, SECOND);
    assertThat(listeningAddresses(hazelcastPort(nodeA))).as("node A's Hazelcast port").contains(FIRST)
        .isSubsetOf(nodes);
    assertThat(listeningAddresses(eventBusPort(nodeA))).as("node A's event bus port").contains(FIRST)
        .isSubsetOf(nodes);
    assertThat(listeningAddresses(hazelcastPort(nodeB))).as("node B's Hazelcast port").contains(SECOND)
        .isSubsetOf(nodes);
    assertThat(listeningAddresses(eventBusPort(nodeB))).as("node B's event bus port").contains(SECOND)
        .isSubsetOf(nodes);
  }

  @Test
  @DisplayName("with cluster.tls nodes holding trusted certificates exchange events, a node with another"
      + " certificate gets no bus traffic through in either direction")
  void tlsAdmitsOnlyTrustedNodes(@TempDir Path dir) throws IOException {
    String login = deployment();
    Path certA = certificate(dir, "node-a");
    Path certB = certificate(dir, "node-b");
    Path stranger = certificate(dir, "stranger");
    Path trusted = concat(dir.resolve("trusted.pem"), certA, certB);
    Path trustedByStranger = concat(dir.resolve("stranger-trust.pem"), certA, certB, stranger);
    TestServer nodeA = world.server(login, clustered("127.0.0.1", 5821, tls(dir, "node-a", trusted)));
    TestServer nodeB = world.node(nodeA, clustered("127.0.0.1", 5821, tls(dir, "node-b", trusted)));
    TestUser alice = world.user("alice", nodeA);
    TestUser bob = world.user("bob", nodeA);
    sendAcross(alice, nodeA, bob, nodeB);
    nodeA.vertx().eventBus().consumer(PING, m -> m.reply("pong")).completion().await();

    // the stranger trusts the nodes and they do not trust it: whatever is refused, they refuse
    Vertx strangerNode = bareNode(login, clustered("127.0.0.1", 5821, tls(dir, "stranger", trustedByStranger)));
    try {
      strangerNode.eventBus().consumer(STRANGER_PING, m -> m.reply("pong")).completion().await();

      assertThat(nodeB.vertx().eventBus().request(PING, "ping").await().body()).isEqualTo("pong");
      assertNoReply(strangerNode, PING);
      assertNoReply(nodeA.vertx(), STRANGER_PING);
    } finally {
      strangerNode.close().await();
    }
  }

  @Test
  @DisplayName("a missing cluster.tls file stops the start with an error naming the key and the file")
  void missingTlsFileIsAClearError(@TempDir Path dir) throws IOException {
    Path cert = certificate(dir, "node");
    Path missing = dir.resolve("absent.key");
    ObjectNode overrides = clustered("127.0.0.1", 5831, Json.MAPPER.createObjectNode().put("keyFile", missing.toString())
        .put("certFile", cert.toString()).put("trustFile", cert.toString()));

    assertThatThrownBy(() -> ServerNode.vertx(config(deployment(), overrides), ShineMetrics.disabled()).await())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("cluster.tls.keyFile")
        .hasMessageContaining(missing.toString());
  }

  /** Alice on {@code from} writes to Bob, whose session on {@code to} gets the event. */
  private JsonNode sendAcross(TestUser alice, TestServer from, TestUser bob, TestServer to) {
    List<JsonNode> onTarget = new CopyOnWriteArrayList<>();
    world.session(bob, to).onEvent(onTarget::add);

    JsonNode sent = world.session(alice, from).sendText("alice", alice.key(), "bob", "across nodes").await();

    // the other node learns of bob's session through the cluster's subscription map: seconds on a loaded machine
    Eventually.until("bob's session on the other node gets the message", 30_000, () -> !onTarget.isEmpty());
    assertThat(onTarget.get(0).at("/payload/baseKey").asText()).isEqualTo(sent.get("baseKey").asText());
    return sent;
  }

  /** The request gets through to no handler: it times out rather than failing for want of a registration. */
  private static void assertNoReply(Vertx sender, String address) {
    assertThatThrownBy(() -> sender.eventBus().request(address, "ping", new DeliveryOptions().setSendTimeout(5_000))
        .await())
        .isInstanceOfSatisfying(ReplyException.class,
            e -> assertThat(e.failureType()).isEqualTo(ReplyFailure.TIMEOUT));
  }

  /** A cluster name of its own per test, so runs in other checkouts on this machine never merge with ours. */
  private static String deployment() {
    return "cl-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** Config overrides: clustering on {@code host} from {@code port}, both test addresses as members. */
  private static ObjectNode clustered(String host, int port, JsonNode tls) {
    ObjectNode root = Json.MAPPER.createObjectNode();
    ObjectNode cluster = root.putObject("cluster").put("enabled", true).put("host", host).put("port", port);
    cluster.putArray("members").add("127.0.0.1").add("127.0.0.2");
    cluster.set("tls", tls);
    return root;
  }

  private static ObjectNode tls(Path dir, String name, Path trustFile) {
    return Json.MAPPER.createObjectNode().put("keyFile", dir.resolve(name + ".key").toString())
        .put("certFile", dir.resolve(name + ".crt").toString()).put("trustFile", trustFile.toString());
  }

  /** A clustered Vert.x of the deployment without a server on it: only its event bus takes part. */
  private static Vertx bareNode(String login, ObjectNode overrides) {
    return ServerNode.vertx(config(login, overrides), ShineMetrics.disabled()).await();
  }

  private static AppConfig config(String login, ObjectNode overrides) {
    return ConfigLoader.parse(overrides.deepCopy().put("serverLogin", login).toString(), Map.of());
  }

  /** A self-signed key and certificate as {@code name.key} and {@code name.crt} in {@code dir}; the certificate. */
  private static Path certificate(Path dir, String name) throws IOException {
    SelfSignedCertificate generated = SelfSignedCertificate.create(name);
    try {
      Files.copy(Path.of(generated.privateKeyPath()), dir.resolve(name + ".key"));
      return Files.copy(Path.of(generated.certificatePath()), dir.resolve(name + ".crt"));
    } finally {
      generated.delete();
    }
  }

  private static Path concat(Path target, Path... certificates) throws IOException {
    StringBuilder pem = new StringBuilder();
    for (Path certificate : certificates) {
      pem.append(Files.readString(certificate));
    }
    return Files.writeString(target, pem);
  }

  private static int hazelcastPort(TestServer node) {
    return ((HazelcastClusterManager) clusterManager(node)).getHazelcastInstance().getCluster().getLocalMember()
        .getAddress().getPort();
  }

  private static int eventBusPort(TestServer node) {
    return clusterManager(node).getNodeInfo().port();
  }

  private static ClusterManager clusterManager(TestServer node) {
    return ((VertxInternal) node.vertx()).clusterManager();
  }

  /**
   * The local addresses of this process's sockets in LISTEN state (0A) on {@code port}, from /proc/net/tcp and
   * tcp6 — the kernel's view, so a wildcard bind shows as 0.0.0.0 or ::, whatever the library reports.
   */
  private static Set<InetAddress> listeningAddresses(int port) {
    Set<String> ownSockets = ownSocketInodes();
    Set<InetAddress> addresses = new HashSet<>();
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      try (Stream<String> lines = Files.lines(Path.of(table))) {
        lines.skip(1).map(line -> line.trim().split("\\s+"))
            .filter(f -> f[3].equals("0A") && ownSockets.contains(f[9]))
            .filter(f -> Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1), 16) == port)
            .forEach(f -> addresses.add(procAddress(f[1].substring(0, f[1].indexOf(':')))));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    assertThat(addresses).as("sockets listening on port %d", port).isNotEmpty();
    return addresses;
  }

  private static Set<String> ownSocketInodes() {
    Pattern socket = Pattern.compile("socket:\\[(\\d+)]");
    Set<String> inodes = new HashSet<>();
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      fds.forEach(fd -> {
        try {
          Matcher m = socket.matcher(Files.readSymbolicLink(fd).toString());
          if (m.matches()) {
            inodes.add(m.group(1));
          }
        } catch (IOException e) {
          // a descriptor closed while we list them is not one of the listening sockets we look for
        }
      });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return inodes;
  }

  /** /proc/net prints an address as 32-bit words in host order (little-endian here), each as 8 hex digits. */
  private static InetAddress procAddress(String hex) {
    byte[] bytes = new byte[hex.length() / 2];
    for (int i = 0; i < bytes.length; i++) {
      int word = i / 4;
      int inWord = 3 - i % 4;
      int at = (word * 4 + inWord) * 2;
      bytes[i] = (byte) Integer.parseInt(hex.substring(at, at + 2), 16);
    }
    try {
      return InetAddress.getByAddress(bytes);
    } catch (UnknownHostException e) {
      throw new IllegalStateException(e);
    }
  }

  private static InetAddress address(String literal) {
    try {
      return InetAddress.getByName(literal);
    } catch (UnknownHostException e) {
      throw new IllegalStateException(e);
    }
  }
}
