package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.netty.util.internal.PlatformDependent;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.UpgradeRejectedException;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Tuple;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.client.ShineClientException;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.support.Eventually;
import org.shine.server.support.LogCapture;
import org.shine.server.support.Sql;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/**
 * The resource bounds of PROTOCOL §11 v2 ({@code limits.*}), one test per bound, each on a real node of its own
 * (fresh database, the bound set in its config) over real sockets.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 180, timeUnit = TimeUnit.SECONDS)
class LimitsIT {
  private static final long WAIT_MS = 30_000;
  private static final int CLOSE_POLICY = 1008;
  private static final int CLOSE_GOING_AWAY = 1001;
  private Vertx vertx;
  private TestWorld world;
  private int nodes;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    world = TestWorld.on(vertx);
  }

  @AfterEach
  void tearDown() {
    world.close();
    vertx.close().await();
  }

  // ---- connections ---------------------------------------------------------------------------------------

  @Test
  @DisplayName("with maxConnections 3, a fourth WebSocket handshake is refused with 503 while three are open,"
      + " and accepted once one of them closes")
  void maxConnections() {
    Node node = node("{\"maxConnections\":3}");
    WebSocketClient client = wsClient(new WebSocketClientOptions());
    List<WebSocket> open = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      open.add(await(connect(client, node)));
    }

    assertThat(rejectedStatus(connect(client, node))).isEqualTo(503);
    assertAnswers(open.get(2));

    // WHEN one of the three closes
    await(open.remove(0).close());

    // THEN a new handshake is accepted (the server gives the place back when it sees the close) and the bound holds
    WebSocket[] fourth = new WebSocket[1];
    Eventually.until("a handshake is accepted again", WAIT_MS, () -> (fourth[0] = tryConnect(client, node)) != null);
    assertAnswers(fourth[0]);
    assertThat(rejectedStatus(connect(client, node))).isEqualTo(503);
  }

  @Test
  @DisplayName("with maxConnectionsPerIp 2, a third connection from 127.0.0.1 is refused while one from 127.0.0.2"
      + " is accepted")
  void maxConnectionsPerIp() {
    Node node = node("{\"maxConnectionsPerIp\":2}");
    WebSocketClient local1 = wsClient(new WebSocketClientOptions());
    WebSocketClient local2 = wsClient(new WebSocketClientOptions().setLocalAddress("127.0.0.2"));
    WebSocket first = await(connect(local1, node));
    WebSocket second = await(connect(local1, node));

    assertThat(rejectedStatus(connect(local1, node))).isEqualTo(503);
    WebSocket other = await(connect(local2, node));

    assertAnswers(other);
    assertAnswers(first);
    assertAnswers(second);
  }

  // ---- time limits ---------------------------------------------------------------------------------------

  @Test
  @DisplayName("with authTimeoutMs 4000, 2,000 anonymous sockets that send nothing are all closed, while an"
      + " anonymous session calling an open op and a logged-in session stay, and the node still answers")
  void authTimeout() {
    // 4 s: the caller's 300 ms calls must keep it alive even when this JVM's event loop stalls for a second or two
    // while it opens 2,000 sockets on a loaded machine (with 1 s it was closed now and then)
    Node node = node("{\"authTimeoutMs\":4000}");
    TestUser alice = world.user("alice", node.server());
    world.user("bob", node.server());
    // GIVEN, opened before the silent ones (so they have lived longer than the timeout when those are gone):
    // a logged-in session and an anonymous one that calls GetUserCard every 300 ms
    ShineClient loggedIn = session(alice, node);
    ShineClient caller = anonymous(node);
    AtomicInteger calls = new AtomicInteger();
    List<Throwable> callFailures = new CopyOnWriteArrayList<>();
    long timer = vertx.setPeriodic(300, id -> caller.request("GetUserCard", ShineClient.object().put("login", "alice"))
        .onSuccess(card -> calls.incrementAndGet()).onFailure(callFailures::add));
    world.onClose(() -> vertx.cancelTimer(timer));

    // WHEN 2,000 anonymous sockets connect and send nothing
    int silent = 2_000;
    WebSocketClient client = wsClient(new WebSocketClientOptions().setMaxConnections(silent + 100));
    AtomicInteger closed = new AtomicInteger();
    Map<Short, Integer> closeCodes = new ConcurrentHashMap<>();
    int connected = 0;
    while (connected < silent) {
      List<Future<WebSocket>> batch = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        batch.add(connect(client, node).onSuccess(ws -> ws.closeHandler(v -> {
          closeCodes.merge(ws.closeStatusCode(), 1, Integer::sum);
          closed.incrementAndGet();
        })));
      }
      await(Future.all(new ArrayList<>(batch)));
      connected += batch.size();
    }

    // THEN the server closes every one of them, as a policy violation
    Eventually.until("every silent anonymous socket is closed by the server", 60_000, () -> closed.get() == silent);
    assertThat(closeCodes).containsOnlyKeys((short) CLOSE_POLICY);
    // the two that spoke are still open: the caller's calls never failed and each session answers now
    assertThat(callFailures).isEmpty();
    assertThat(calls.get()).isGreaterThan(3);
    assertThat(await(caller.request("GetUserCard", ShineClient.object().put("login", "bob"))).path("card")
        .path("login").asText()).isEqualTo("bob");
    assertThat(await(loggedIn.request("GetUserSettings", ShineClient.object())).has("settings")).isTrue();
    // and the node still takes a new login and a send
    ShineClient fresh = session(alice, node);
    assertDelivered(node, fresh, alice, "bob");
  }

  @Test
  @DisplayName("with idleTimeoutMs 1500, a client that answers no ping is closed, while a silent client that"
      + " answers pings stays open well past the timeout and can still send")
  void idleTimeout() throws Exception {
    Node node = node("{\"idleTimeoutMs\":1500}");
    TestUser alice = world.user("alice", node.server());
    world.user("bob", node.server());
    // GIVEN a logged-in session that sends nothing (its Vert.x socket answers every ping with a pong) and a client
    // that never writes after its handshake, so it answers no ping
    ShineClient quiet = session(alice, node);
    try (PlainClient mute = PlainClient.connect(node.server().port())) {
      // WHEN both stay silent
      PlainClient.Closing closing = mute.readUntilClose();

      // THEN the mute one was pinged, then closed as idle
      assertThat(closing.pings()).isGreaterThanOrEqualTo(1);
      assertThat(closing.code()).isEqualTo(CLOSE_GOING_AWAY);
    }
    // the quiet one stays for two more idle timeouts: two more mute clients, one after the other, are pinged and
    // closed as idle meanwhile, and the quiet one is still served
    for (int i = 0; i < 2; i++) {
      try (PlainClient later = PlainClient.connect(node.server().port())) {
        PlainClient.Closing closing = later.readUntilClose();
        assertThat(closing.pings()).isGreaterThanOrEqualTo(1);
        assertThat(closing.code()).isEqualTo(CLOSE_GOING_AWAY);
      }
    }
    assertDelivered(node, quiet, alice, "bob");
  }

  // ---- write backpressure --------------------------------------------------------------------------------

  @Test
  @DisplayName("a recipient that stops reading is closed with 1008 once its unsent bytes pass writeQueueBytes for"
      + " slowReaderCloseMs, every send to it is answered and stored, and the server's memory stays bounded")
  void slowReader() throws Exception {
    Node node = node("{\"writeQueueBytes\":65536,\"slowReaderCloseMs\":1000,\"sendsPerUserPerS\":100000}");
    TestUser alice = world.user("alice", node.server());
    TestUser bob = world.user("bob", node.server());
    try (PlainClient recipient = PlainClient.connect(node.server().port())) {
      recipient.login(bob);
      ShineClient sender = session(alice, node);
      byte[] body = new byte[30 * 1024];
      ThreadLocalRandom.current().nextBytes(body);
      // the same sends first while bob reads them: the server's buffer pools then have the size this traffic
      // needs (and more, as it also writes every event) before the baseline is taken
      int warmUpCount = 300;
      Future<Integer> warmUpRead = vertx.executeBlocking(() -> readEvents(recipient, warmUpCount), false);
      List<String> warmUp = sendAll(sender, alice, "bob", body, warmUpCount, 32);
      assertThat(await(warmUpRead)).isEqualTo(warmUpCount);
      long baseline = retainedBytes();

      // WHEN bob no longer reads (nothing in this JVM reads his socket) and alice sends a few hundred 30 KB messages
      List<String> sent = sendAll(sender, alice, "bob", body, 400, 32);

      // THEN the server holds far less than what it had to push. Without the bound every event frame (about 40 KB:
      // the 30 KB container in base64) waits in the server's write queue for a reader that never reads, less the
      // few MB the kernel's socket buffers take (measured: 12 of 16 MB stay in the heap); with it the server keeps
      // writeQueueBytes and a few frames (measured: under 1 MB). A third of the total lies well between the two.
      long retained = retainedBytes() - baseline;
      long pushed = sent.size() * eventFrameBytes(pair(alice, "bob", body));
      assertThat(retained).as("bytes retained of %d pushed", pushed).isLessThan(pushed / 3);
      assertThat(count(node, "SELECT count(*) FROM dm_message WHERE owner = 'bob'"))
          .isEqualTo(warmUp.size() + sent.size());
      assertThat(count(node, "SELECT count(*) FROM dm_message WHERE owner = 'alice'"))
          .isEqualTo(warmUp.size() + sent.size());
      // and once bob's client reads again, it finds its session closed by the server as a policy violation, after
      // fewer events than were sent
      PlainClient.Closing closing = recipient.readUntilClose();
      assertThat(closing.code()).isEqualTo(CLOSE_POLICY);
      assertThat(closing.texts()).isLessThan(sent.size());
    }
  }

  @Test
  @DisplayName("a client that sends requests and reads nothing: once its unsent bytes pass writeQueueBytes, no"
      + " request it sends later is dispatched (none of its later writes is stored), at most the requests read"
      + " before are answered, and it is closed after slowReaderCloseMs")
  void congestedSessionReadsNoRequests() throws Exception {
    Node node = node("{\"writeQueueBytes\":65536,\"slowReaderCloseMs\":1500,\"maxResponseBytes\":262144,"
        + "\"sendsPerUserPerS\":100000}");
    TestUser alice = world.user("alice", node.server());
    ShineClient setup = session(alice, node);
    TextNode value = TextNode.valueOf("x".repeat(4_000));
    for (int i = 0; i < 60; i++) {
      await(setup.request("SetUserSetting", withValue("s" + i, value)));
    }
    try (LogCapture log = LogCapture.of(GatewayVerticle.class.getName(), Level.DEBUG);
        PlainClient client = PlainClient.connect(node.server().port())) {
      client.login(alice);
      // WHEN alice asks for her 240 KB of settings 40 times and reads none of the answers
      for (int i = 0; i < 40; i++) {
        client.writeText(ShineClient.object().put("op", "GetUserSettings").put("requestId", "get" + i).toString());
      }
      Eventually.until("alice's session is congested", WAIT_MS,
          () -> log.text().contains("session congested: no longer read [session: alice]"));
      // ... and then writes settings
      for (int i = 0; i < 20; i++) {
        ObjectNode frame = ShineClient.object().put("op", "SetUserSetting").put("requestId", "late" + i);
        frame.set("payload", withValue("late" + i, TextNode.valueOf("v")));
        client.writeText(frame.toString());
      }
      Eventually.until("the slow reader is closed", WAIT_MS,
          () -> log.text().contains("session closed [session: alice, code: " + CLOSE_POLICY + "]"));

      // THEN none of the later requests was read, let alone stored, and she finds only answers to earlier ones
      assertThat(count(node, "SELECT count(*) FROM user_setting WHERE owner = 'alice' AND key LIKE 'late%'"))
          .isZero();
      PlainClient.Closing closing = client.readUntilClose();
      assertThat(closing.code()).isEqualTo(CLOSE_POLICY);
      assertThat(closing.texts()).isBetween(1, 40);
    }
  }

  /** Reads frames until {@code count} IncomingDirectMessage events have come, then stops reading. */
  private static int readEvents(PlainClient client, int count) throws IOException {
    int events = 0;
    while (events < count) {
      PlainClient.Frame frame = client.readFrame();
      if (frame.text() && frame.json().path("op").asText().equals("IncomingDirectMessage")) {
        events++;
      }
    }
    return events;
  }

  // ---- compression ---------------------------------------------------------------------------------------

  @Test
  @DisplayName("permessage-deflate offered by a client is declined by default and accepted with"
      + " webSocketCompression true")
  void webSocketCompression() {
    WebSocketClientOptions offering = new WebSocketClientOptions().setTryUsePerMessageCompression(true);
    Node plain = node("{}");
    WebSocket declined = await(connect(wsClient(offering), plain));
    assertThat(declined.headers().get("sec-websocket-extensions")).isNull();
    assertAnswers(declined);

    Node compressing = node("{\"webSocketCompression\":true}");
    WebSocket accepted = await(connect(wsClient(offering), compressing));
    assertThat(accepted.headers().get("sec-websocket-extensions")).contains("permessage-deflate");
    assertAnswers(accepted);
  }

  // ---- response size -------------------------------------------------------------------------------------

  @Test
  @DisplayName("with maxResponseBytes 262144, a history page of ten 60 KB messages ends early with hasMore, no"
      + " frame is larger, and paging on returns all ten exactly once")
  void maxResponseBytes() {
    int maxResponseBytes = 262_144;
    Node node = node("{\"maxResponseBytes\":" + maxResponseBytes + "}");
    TestUser alice = world.user("alice", node.server());
    world.user("bob", node.server());
    ShineClient sender = session(alice, node);
    long now = System.currentTimeMillis();
    Set<String> sentKeys = new HashSet<>();
    for (int i = 0; i < 10; i++) {
      byte[] body = new byte[60 * 1024];
      ThreadLocalRandom.current().nextBytes(body);
      SignedPair pair = ShineClient.signPair("alice", alice.key(), "bob", now - 10_000 + i * 1_000,
          ShineClient.randomNonce(), 0, body);
      await(sender.sendPair(pair));
      sentKeys.add(pair.outgoing().messageKey());
    }
    RawSession reader = raw(node, new WebSocketClientOptions());
    reader.login(alice);

    // WHEN alice pages through her conversation with bob, 50 at a time
    JsonNode first = await(reader.request("GetDirectMessages", ShineClient.object().put("peer", "bob")
        .put("limit", 50)));

    // THEN the first page ends early and says so
    assertThat(first.get("messages").size()).isBetween(1, 9);
    assertThat(first.get("hasMore").asBoolean()).isTrue();
    List<String> seen = new ArrayList<>();
    JsonNode page = first;
    for (int pages = 1; ; pages++) {
      assertThat(pages).as("pages").isLessThanOrEqualTo(10);
      long oldest = Long.MAX_VALUE;
      for (JsonNode message : page.get("messages")) {
        seen.add(message.get("messageKey").asText());
        oldest = Math.min(oldest, Long.parseLong(message.get("baseKey").asText().split("\\|")[2]));
      }
      if (!page.get("hasMore").asBoolean()) {
        break;
      }
      page = await(reader.request("GetDirectMessages", ShineClient.object().put("peer", "bob").put("limit", 50)
          .put("beforeCreatedAtMs", oldest)));
    }
    assertThat(seen).hasSize(10).doesNotHaveDuplicates();
    assertThat(new HashSet<>(seen)).isEqualTo(sentKeys);
    assertThat(reader.frameBytes()).isNotEmpty().allSatisfy(bytes -> assertThat(bytes)
        .isLessThanOrEqualTo(maxResponseBytes));
  }

  @Test
  @DisplayName("attack 4 of issue 16, 3,000 settings of 4 KiB for one user: each past quotas.settingsBytes (1 MiB) is"
      + " 413 QUOTA_EXCEEDED naming the quota and not stored; GetUserSettings answers in pages no larger than"
      + " maxResponseBytes (262144), and paging reads every stored setting exactly once, in key order")
  void settingsQuotaAndPages() {
    int maxResponseBytes = 262_144;
    Node node = node("{\"maxResponseBytes\":" + maxResponseBytes + ",\"sendsPerUserPerS\":100000}");
    TestUser alice = world.user("alice", node.server());
    RawSession writer = raw(node, new WebSocketClientOptions());
    writer.login(alice);
    // a 4 KiB value: 4,096 bytes of JSON text; a key of 5 bytes
    TextNode value = TextNode.valueOf("x".repeat(4_094));
    List<Future<JsonNode>> writes = new ArrayList<>();
    for (int i = 0; i < 3_000; i += 32) {
      List<Future<JsonNode>> batch = new ArrayList<>();
      for (int j = i; j < Math.min(3_000, i + 32); j++) {
        batch.add(writer.request("SetUserSetting", withValue(String.format("k%04d", j), value)));
      }
      awaitAll(batch);
      writes.addAll(batch);
    }

    int fit = (int) (1_048_576 / (5 + 4_096));
    assertThat(writes.stream().filter(Future::succeeded).count()).isEqualTo(fit);
    assertThat(writes.stream().filter(Future::failed).map(Future::cause)).hasSize(3_000 - fit)
        .allSatisfy(cause -> assertThat(cause).isInstanceOfSatisfying(ShineClientException.class, e -> {
          assertThat(e.status()).isEqualTo(413);
          assertThat(e.code()).isEqualTo(ErrorCode.QUOTA_EXCEEDED);
          assertThat(e.getMessage()).contains("quotas.settingsBytes");
        }));
    assertThat(count(node, "SELECT count(*) FROM user_setting WHERE owner = 'alice'")).isEqualTo(fit);

    RawSession reader = raw(node, new WebSocketClientOptions());
    reader.login(alice);
    List<String> keys = new ArrayList<>();
    String after = null;
    int pages = 0;
    do {
      ObjectNode payload = ShineClient.object();
      if (after != null) {
        payload.put("afterKey", after);
      }
      JsonNode page = await(reader.request("GetUserSettings", payload));
      page.get("settings").properties().forEach(e -> {
        assertThat(e.getValue()).isEqualTo(value);
        keys.add(e.getKey());
      });
      after = page.path("nextKey").asText(null);
      pages++;
    } while (after != null && pages <= 100);
    assertThat(pages).isBetween(4, 100);
    assertThat(keys).hasSize(fit).doesNotHaveDuplicates().isSorted();
    List<String> stored = new ArrayList<>();
    await(node.sql().pool().query("SELECT key FROM user_setting WHERE owner = 'alice' ORDER BY key").execute())
        .forEach(row -> stored.add(row.getString(0)));
    assertThat(keys).isEqualTo(stored);
    assertThat(reader.frameBytes()).hasSize(pages + 2).allSatisfy(bytes -> assertThat(bytes)
        .isLessThanOrEqualTo(maxResponseBytes));
    assertThat(await(session(alice, node).allSettings())).hasSize(fit);
  }

  // ---- node-wide queues and rates ------------------------------------------------------------------------

  @Test
  @DisplayName("with verifyQueue 1, concurrent sends beyond the queue get 429 OVERLOADED and are not stored, every"
      + " 200 is stored, and a send after them succeeds")
  void verifyQueue() {
    Node node = node("{\"verifyQueue\":1,\"maxInFlightPerConnection\":512,\"sendsPerUserPerS\":100000}");
    TestUser alice = world.user("alice", node.server());
    world.user("bob", node.server());
    ShineClient session = session(alice, node);

    // WHEN 200 sends are in flight at once on one connection
    List<SignedPair> pairs = new ArrayList<>();
    List<Future<JsonNode>> sends = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      SignedPair pair = pair(alice, "bob", ("queued " + i).getBytes(StandardCharsets.UTF_8));
      pairs.add(pair);
      sends.add(session.sendPair(pair));
    }
    awaitAll(sends);

    // THEN some were refused as overloaded, nothing else failed, and the stored rows match the answers
    List<SignedPair> refused = new ArrayList<>();
    for (int i = 0; i < pairs.size(); i++) {
      if (sends.get(i).failed()) {
        assertRefusal(sends.get(i), 429, ErrorCode.OVERLOADED);
        refused.add(pairs.get(i));
        assertThat(rowsOf(node, pairs.get(i))).as("rows of a refused pair").isZero();
      } else {
        assertThat(rowsOf(node, pairs.get(i))).as("rows of an accepted pair").isEqualTo(2);
      }
    }
    assertThat(refused).isNotEmpty();
    // the queue drained: a send now is checked and stored
    assertDelivered(node, session, alice, "bob");
  }

  @Test
  @DisplayName("with sendsPerUserPerS 5, a burst of 30 sends by alice gets some 429 RATE_LIMITED with nothing"
      + " stored for them, while bob's sends at the same time are not limited")
  void sendsPerUserPerS() {
    Node node = node("{\"sendsPerUserPerS\":5}");
    TestUser alice = world.user("alice", node.server());
    TestUser bob = world.user("bob", node.server());
    ShineClient aliceSession = session(alice, node);
    ShineClient bobSession = session(bob, node);

    // WHEN alice fires 30 sends at once and bob, at the same time, 3
    List<SignedPair> alicePairs = new ArrayList<>();
    List<Future<JsonNode>> aliceSends = new ArrayList<>();
    List<Future<JsonNode>> bobSends = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      SignedPair pair = pair(alice, "bob", ("burst " + i).getBytes(StandardCharsets.UTF_8));
      alicePairs.add(pair);
      aliceSends.add(aliceSession.sendPair(pair));
      if (i % 10 == 5) {
        bobSends.add(bobSession.sendPair(pair(bob, "alice", ("reply " + i).getBytes(StandardCharsets.UTF_8))));
      }
    }
    awaitAll(aliceSends);
    awaitAll(bobSends);

    // THEN some of alice's are limited (how many depends on timing) and not stored; the others are
    int limited = 0;
    for (int i = 0; i < alicePairs.size(); i++) {
      if (aliceSends.get(i).failed()) {
        assertRefusal(aliceSends.get(i), 429, ErrorCode.RATE_LIMITED);
        limited++;
        assertThat(rowsOf(node, alicePairs.get(i))).as("rows of a limited pair").isZero();
      } else {
        assertThat(rowsOf(node, alicePairs.get(i))).as("rows of an accepted pair").isEqualTo(2);
      }
    }
    assertThat(limited).isPositive();
    assertThat(bobSends).allSatisfy(send -> assertThat(send.succeeded()).as("bob's send: %s", send.cause())
        .isTrue());
  }

  // ---- settings ------------------------------------------------------------------------------------------

  @Test
  @DisplayName("SetUserSetting with U+0000 in the key, in a string of the value or in a field name of the value is"
      + " 400 INVALID_FIELD, stores nothing, and the session goes on")
  void settingsWithNul() {
    Node node = node("{}");
    TestUser alice = world.user("alice", node.server());
    ShineClient session = session(alice, node);
    ObjectNode nulInName = ShineClient.object();
    nulInName.putObject("colors").put("fore\u0000ground", "black");
    ObjectNode nulInNestedString = ShineClient.object();
    nulInNestedString.putArray("tags").add("ok").add("not\u0000ok");
    List<ObjectNode> refused = List.of(
        ShineClient.object().put("key", "theme\u0000").put("value", "dark"),
        ShineClient.object().put("key", "theme").put("value", "da\u0000rk"),
        withValue("theme", nulInNestedString),
        withValue("theme", nulInName));

    for (ObjectNode payload : refused) {
      assertRefusal(session.request("SetUserSetting", payload), 400, ErrorCode.INVALID_FIELD);
    }

    assertThat(count(node, "SELECT count(*) FROM user_setting")).isZero();
    assertThat(await(session.request("GetUserSettings", ShineClient.object())).get("settings").size()).isZero();
    await(session.request("SetUserSetting", ShineClient.object().put("key", "theme").put("value", "dark")));
    assertThat(await(session.request("GetUserSettings", ShineClient.object())).get("settings").get("theme")
        .asText()).isEqualTo("dark");
  }

  // ---- fixtures ------------------------------------------------------------------------------------------

  /** A node under test with its own database and reads of it in SQL. */
  private record Node(TestServer server, Sql sql) {
  }

  private Node node(String limitsJson) {
    TestServer server = world.server("s" + (++nodes), "{\"limits\":" + limitsJson + "}");
    return new Node(server, world.sql(server));
  }

  private ShineClient session(TestUser user, Node node) {
    return world.session(user, node.server());
  }

  private ShineClient anonymous(Node node) {
    return world.anonymous(node.server());
  }

  private WebSocketClient wsClient(WebSocketClientOptions options) {
    WebSocketClient client = vertx.createWebSocketClient(options);
    world.onClose(() -> client.close().await());
    return client;
  }

  private RawSession raw(Node node, WebSocketClientOptions options) {
    RawSession session = RawSession.open(wsClient(options.setMaxFrameSize(8 << 20).setMaxMessageSize(8 << 20)),
        node.server());
    return session;
  }

  private static Future<WebSocket> connect(WebSocketClient client, Node node) {
    return client.connect(node.server().port(), "127.0.0.1", "/ws");
  }

  /** A connection when the handshake is accepted, null when it is refused. */
  private static WebSocket tryConnect(WebSocketClient client, Node node) {
    Future<WebSocket> attempt = connect(client, node);
    await(attempt.otherwiseEmpty());
    return attempt.succeeded() ? attempt.result() : null;
  }

  /** The HTTP status with which the server refused a WebSocket handshake. */
  private static int rejectedStatus(Future<WebSocket> handshake) {
    await(handshake.otherwiseEmpty());
    assertThat(handshake.failed()).as("the handshake is refused").isTrue();
    assertThat(handshake.cause()).isInstanceOf(UpgradeRejectedException.class);
    return ((UpgradeRejectedException) handshake.cause()).getStatus();
  }

  /** The connection is served: a GetUserCard for an unknown login gets its 404 answer. */
  private static void assertAnswers(WebSocket ws) {
    Promise<JsonNode> answer = Promise.promise();
    ws.textMessageHandler(text -> answer.tryComplete(parse(text)));
    await(ws.writeTextMessage("{\"op\":\"GetUserCard\",\"requestId\":\"probe\",\"payload\":{\"login\":\"nobody\"}}"));
    JsonNode frame = await(answer.future());
    assertThat(frame.path("requestId").asText()).isEqualTo("probe");
    assertThat(frame.path("status").asInt()).isEqualTo(404);
  }

  /** A fresh pair is accepted, delivered and stored on this session. */
  private static void assertDelivered(Node node, ShineClient session, TestUser from, String to) {
    SignedPair pair = pair(from, to, "still here".getBytes(StandardCharsets.UTF_8));
    JsonNode result = await(session.sendPair(pair));
    assertThat(result.get("deliveryState").asText()).isEqualTo("delivered");
    assertThat(rowsOf(node, pair)).isEqualTo(2);
  }

  /**
   * Sends {@code count} pairs with {@code body}, at most {@code window} in flight; every one must succeed. Answers
   * their baseKeys only (holding the pairs would hold two copies of every body in the test's own heap).
   */
  private static List<String> sendAll(ShineClient session, TestUser from, String to, byte[] body, int count,
      int window) {
    List<String> sent = new ArrayList<>();
    while (sent.size() < count) {
      List<Future<JsonNode>> batch = new ArrayList<>();
      for (int i = 0; i < window && sent.size() < count; i++) {
        SignedPair pair = pair(from, to, body);
        batch.add(session.sendPair(pair));
        sent.add(pair.outgoing().baseKey());
      }
      awaitAll(batch);
      assertThat(batch).allSatisfy(send -> assertThat(send.succeeded()).as("send: %s", send.cause()).isTrue());
    }
    return sent;
  }

  /** The size of the IncomingDirectMessage event that pushes this pair's incoming copy. */
  private static long eventFrameBytes(SignedPair pair) {
    return Base64.getEncoder().encodeToString(pair.incoming().bytes()).length()
        + 2L * pair.incoming().messageKey().length() + 80;
  }

  /**
   * Heap in use after a full collection, plus the direct memory Netty counts itself. (Netty counts it only when it
   * allocates without a cleaner, which this JVM does not let it do, so that part is 0 here; the JVM's own count of
   * direct buffers is no help either: it holds the pooled allocator's chunks, which grow and shrink by megabytes
   * with no regard to what is in use.) Queued frames live on the heap: Vert.x keeps a frame in its own outbound
   * queue as heap bytes once the channel is not writable, which a reader that never reads makes it after the
   * channel's water mark (at most writeQueueBytes) is in Netty's outbound buffer.
   */
  private static long retainedBytes() {
    long[] last = {-1, -1};
    Eventually.until("the heap settles after a full collection", 10_000, () -> {
      System.gc();
      last[0] = last[1];
      last[1] = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed()
          + Math.max(0, PlatformDependent.usedDirectMemory());
      return last[0] >= 0 && Math.abs(last[1] - last[0]) < 64 * 1024;
    });
    return last[1];
  }

  private static ObjectNode withValue(String key, JsonNode value) {
    ObjectNode payload = ShineClient.object().put("key", key);
    payload.set("value", value);
    return payload;
  }

  private static SignedPair pair(TestUser from, String to, byte[] body) {
    return ShineClient.signPair(from.login(), from.key(), to, System.currentTimeMillis(), ShineClient.randomNonce(),
        0, body);
  }

  private static long rowsOf(Node node, SignedPair pair) {
    return count(node, "SELECT count(*) FROM dm_message WHERE base_key = $1", pair.outgoing().baseKey());
  }

  private static long count(Node node, String sqlText, Object... params) {
    return await(node.sql().pool().preparedQuery(sqlText).execute(Tuple.from(params))).iterator().next().getLong(0);
  }

  private static void assertRefusal(Future<?> response, int status, String code) {
    assertThatThrownBy(() -> await(response)).isInstanceOfSatisfying(ShineClientException.class, e -> {
      assertThat(e.status()).as("status of [%s]", e.getMessage()).isEqualTo(status);
      assertThat(e.code()).as("code of [%s]", e.getMessage()).isEqualTo(code);
    });
  }

  private static void awaitAll(List<Future<JsonNode>> futures) {
    await(Future.join(new ArrayList<>(futures)).otherwiseEmpty());
  }

  private static <T> T await(Future<T> future) {
    try {
      return future.await(WAIT_MS, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("no answer within " + WAIT_MS + " ms", e);
    }
  }

  private static JsonNode parse(String text) {
    try {
      return Json.MAPPER.readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A session on a Vert.x WebSocket of its own that keeps the size of every text frame it receives. */
  private static final class RawSession {
    private final WebSocket ws;
    private final Map<String, Promise<JsonNode>> pending = new ConcurrentHashMap<>();
    private final List<Integer> frameBytes = new CopyOnWriteArrayList<>();
    private final AtomicLong ids = new AtomicLong();

    private RawSession(WebSocket ws) {
      this.ws = ws;
      ws.textMessageHandler(this::onText);
      ws.closeHandler(v -> pending.values().forEach(p -> p.tryFail(new ShineClientException(0, "CONNECTION_CLOSED",
          "closed"))));
    }

    static RawSession open(WebSocketClient client, TestServer server) {
      return new RawSession(await(client.connect(server.port(), "127.0.0.1", "/ws")));
    }

    Future<JsonNode> request(String op, ObjectNode payload) {
      String requestId = "r-" + ids.incrementAndGet();
      ObjectNode frame = ShineClient.object().put("op", op).put("requestId", requestId);
      frame.set("payload", payload);
      Promise<JsonNode> answer = Promise.promise();
      pending.put(requestId, answer);
      ws.writeTextMessage(frame.toString()).onFailure(answer::tryFail);
      return answer.future();
    }

    void login(TestUser user) {
      JsonNode challenge = await(request("AuthChallenge", ShineClient.object().put("login", user.login())));
      byte[] signature = Ed25519Signer.sign(user.key().privateKey(), ("SHiNE_AUTH|"
          + challenge.get("serverLogin").asText() + "|" + challenge.get("challengeB64").asText())
          .getBytes(StandardCharsets.UTF_8));
      await(request("AuthLogin", ShineClient.object().put("login", user.login())
          .put("signatureB64", Base64.getEncoder().encodeToString(signature))));
    }

    List<Integer> frameBytes() {
      return List.copyOf(frameBytes);
    }

    private void onText(String text) {
      frameBytes.add(text.getBytes(StandardCharsets.UTF_8).length);
      JsonNode frame = parse(text);
      JsonNode requestId = frame.get("requestId");
      Promise<JsonNode> answer = requestId == null ? null : pending.remove(requestId.asText());
      if (answer == null) {
        return;
      }
      if (frame.path("status").asInt() == 200) {
        answer.tryComplete(frame.path("payload"));
      } else {
        answer.tryFail(new ShineClientException(frame.path("status").asInt(), frame.at("/error/code").asText(),
            frame.at("/error/message").asText()));
      }
    }
  }

  /**
   * A WebSocket client on a plain blocking socket that reads only when the test reads, exactly one frame at a time
   * (no read-ahead), and never writes after the requests the test makes: it answers no ping. (A paused Vert.x
   * WebSocket is no such client: Vert.x answers pings below the pause until its inbound queue fills, a paused client
   * cannot see that it was closed, and what it has read holds buffers in this JVM.)
   */
  private static final class PlainClient implements AutoCloseable {
    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    private PlainClient(Socket socket) throws IOException {
      this.socket = socket;
      this.in = new DataInputStream(socket.getInputStream());
      this.out = socket.getOutputStream();
    }

    static PlainClient connect(int port) throws IOException {
      Socket socket = new Socket();
      // a fixed receive buffer: the kernel does not grow it, so it takes little of what the server sends
      socket.setReceiveBufferSize(64 * 1024);
      socket.connect(new InetSocketAddress("127.0.0.1", port));
      socket.setSoTimeout(20_000);
      byte[] nonce = new byte[16];
      ThreadLocalRandom.current().nextBytes(nonce);
      PlainClient client = new PlainClient(socket);
      client.out.write(("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nUpgrade: websocket\r\n"
          + "Connection: Upgrade\r\nSec-WebSocket-Key: " + Base64.getEncoder().encodeToString(nonce) + "\r\n"
          + "Sec-WebSocket-Version: 13\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      client.out.flush();
      assertThat(client.readHead()).startsWith("HTTP/1.1 101");
      return client;
    }

    /** One frame the server sent. */
    record Frame(int opcode, byte[] payload) {
      boolean text() {
        return opcode == 0x1;
      }

      boolean ping() {
        return opcode == 0x9;
      }

      boolean close() {
        return opcode == 0x8;
      }

      int closeCode() {
        return payload.length >= 2 ? ((payload[0] & 0xff) << 8) | (payload[1] & 0xff) : -1;
      }

      JsonNode json() {
        return parse(new String(payload, StandardCharsets.UTF_8));
      }
    }

    /** What the server sent until its close frame. */
    record Closing(int pings, int texts, int code) {
    }

    /** AuthChallenge and AuthLogin as {@code user}. */
    void login(TestUser user) throws IOException {
      JsonNode challenge = call("AuthChallenge", ShineClient.object().put("login", user.login()));
      byte[] signature = Ed25519Signer.sign(user.key().privateKey(), ("SHiNE_AUTH|"
          + challenge.at("/payload/serverLogin").asText() + "|" + challenge.at("/payload/challengeB64").asText())
          .getBytes(StandardCharsets.UTF_8));
      JsonNode login = call("AuthLogin", ShineClient.object().put("login", user.login())
          .put("signatureB64", Base64.getEncoder().encodeToString(signature)));
      assertThat(login.path("status").asInt()).as("login answer %s", login).isEqualTo(200);
    }

    /** Sends one request and reads frames up to its answer (nothing else is expected before it). */
    private JsonNode call(String op, ObjectNode payload) throws IOException {
      ObjectNode frame = ShineClient.object().put("op", op).put("requestId", op);
      frame.set("payload", payload);
      writeText(frame.toString());
      while (true) {
        Frame next = readFrame();
        if (next.text() && next.json().path("requestId").asText().equals(op)) {
          return next.json();
        }
      }
    }

    private void writeText(String text) throws IOException {
      byte[] payload = text.getBytes(StandardCharsets.UTF_8);
      byte[] mask = new byte[4];
      ThreadLocalRandom.current().nextBytes(mask);
      ByteArrayOutputStream frame = new ByteArrayOutputStream();
      frame.write(0x81);
      if (payload.length < 126) {
        frame.write(0x80 | payload.length);
      } else {
        frame.write(0x80 | 126);
        frame.write(payload.length >> 8);
        frame.write(payload.length & 0xff);
      }
      frame.write(mask);
      for (int i = 0; i < payload.length; i++) {
        frame.write(payload[i] ^ mask[i % 4]);
      }
      out.write(frame.toByteArray());
      out.flush();
    }

    /** Reads exactly one frame (the server's frames are not masked, nor fragmented by this server). */
    Frame readFrame() throws IOException {
      int first = in.readUnsignedByte();
      int second = in.readUnsignedByte();
      long length = second & 0x7f;
      if (length == 126) {
        length = in.readUnsignedShort();
      } else if (length == 127) {
        length = in.readLong();
      }
      byte[] payload = new byte[(int) length];
      in.readFully(payload);
      return new Frame(first & 0x0f, payload);
    }

    Closing readUntilClose() throws IOException {
      int pings = 0;
      int texts = 0;
      while (true) {
        Frame frame = readFrame();
        if (frame.ping()) {
          pings++;
        } else if (frame.text()) {
          texts++;
        } else if (frame.close()) {
          return new Closing(pings, texts, frame.closeCode());
        }
      }
    }

    private String readHead() throws IOException {
      ByteArrayOutputStream head = new ByteArrayOutputStream();
      while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
        head.write(in.readUnsignedByte());
      }
      return head.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
