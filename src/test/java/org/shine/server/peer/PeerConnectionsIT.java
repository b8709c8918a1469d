package org.shine.server.peer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.client.ShineClient;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Ops;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.support.Eventually;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestWorld;

/**
 * The node's peer connections (PROTOCOL §11, §6a): only to configured peers and to URLs named in current routes;
 * a route's connection closes when idle for {@code limits.idleTimeoutMs}; at most {@code delivery.queueCapacity}
 * calls wait on one connection. Calls go through the node's own bus, as its verticles make them.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class PeerConnectionsIT {
  private static final long WAIT_MS = 20_000;
  private static final long CALL_TIMEOUT_MS = 30_000;
  private Vertx vertx;
  private TestWorld world;

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

  @Test
  @DisplayName("a call to a URL that is neither a configured peer nor in a current route is refused 403"
      + " PEER_NOT_ALLOWED without connecting, while a URL named in a card's route is called")
  void onlyKnownUrls() {
    StubPeer stranger = world.stub().acceptEverything();
    StubPeer routed = world.stub().acceptEverything();
    TestServer server = server("{}");
    // GIVEN dave's card names the routed stub as his access server
    publishCardRoutedTo(server, "dave", routed);

    // WHEN the node is asked to call each
    Future<PeerResponse> refused = call(server, stranger.url(), Ops.GET_DM_DELIVERY_STATUS);
    Future<PeerResponse> allowed = call(server, routed.url(), Ops.GET_DM_DELIVERY_STATUS);

    // THEN only the routed one is called
    assertFailure(refused, 403, ErrorCode.PEER_NOT_ALLOWED);
    assertThat(stranger.connectionsAccepted()).isZero();
    assertThat(stranger.requests()).isEmpty();
    assertThat(await(allowed).payload().isObject()).isTrue();
    assertThat(routed.count(Ops.GET_DM_DELIVERY_STATUS)).isEqualTo(1);
  }

  @Test
  @DisplayName("a route's connection is closed after idleTimeoutMs without calls and opened again by the next call,"
      + " while a configured peer's connection stays")
  void idleRouteConnectionsClose() {
    StubPeer configured = world.stub().named("s8").acceptEverything();
    StubPeer routed = world.stub().acceptEverything();
    TestServer server = server("{\"limits\":{\"idleTimeoutMs\":1500},\"peers\":[{\"serverLogin\":\"s8\",\"url\":\""
        + configured.url() + "\"}]}");
    publishCardRoutedTo(server, "dave", routed);
    await(call(server, routed.url(), Ops.GET_DM_DELIVERY_STATUS));
    assertThat(routed.openConnections()).isEqualTo(1);

    // WHEN no call is made for a while, THEN the route's connection is closed by the node
    Eventually.until("the idle route connection is closed", WAIT_MS, () -> routed.openConnections() == 0);
    assertThat(routed.connectionsAccepted()).isEqualTo(1);
    // the configured peer's connection, idle just as long, stays
    assertThat(configured.openConnections()).isEqualTo(1);
    assertThat(configured.connectionsAccepted()).isEqualTo(1);

    // and the next call to the route connects again
    await(call(server, routed.url(), Ops.GET_DM_DELIVERY_STATUS));
    assertThat(routed.connectionsAccepted()).isEqualTo(2);
    assertThat(routed.count(Ops.GET_DM_DELIVERY_STATUS)).isEqualTo(2);
  }

  @Test
  @DisplayName("with maxInFlightPerConnection 1 and queueCapacity 2, against a peer that never answers, the fourth"
      + " concurrent call fails at once with 503 PEER_BUSY")
  void boundedCallQueue() {
    StubPeer silent = world.stub().respond(Ops.GET_DM_DELIVERY_STATUS, (op, payload) -> ShineClient.object())
        .respond(Ops.RECEIVE_INCOMING_MESSAGE, (op, payload) -> Promise.promise().future());
    TestServer server = server("{\"limits\":{\"maxInFlightPerConnection\":1},\"delivery\":{\"queueCapacity\":2}}");
    publishCardRoutedTo(server, "dave", silent);
    // GIVEN the connection is open and idle: a call on it has been answered (a server first seen in a card is not
    // dialed for a card relay, PROTOCOL §13, so this call opens it)
    await(call(server, silent.url(), Ops.GET_DM_DELIVERY_STATUS));
    Eventually.until("the login on the new connection is done", WAIT_MS,
        () -> silent.count("ServerAuthLogin") == 1);

    // WHEN four calls are made at once to a peer that answers none of them
    List<Future<PeerResponse>> calls = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      calls.add(call(server, silent.url(), Ops.RECEIVE_INCOMING_MESSAGE));
    }

    // THEN the fourth fails while the first (sent) and the next two (waiting) are still pending
    assertFailure(calls.get(3), 503, ErrorCode.PEER_BUSY);
    assertThat(calls.subList(0, 3)).allSatisfy(pending -> assertThat(pending.isComplete()).isFalse());
    Eventually.until("the first call reached the peer", WAIT_MS,
        () -> silent.count(Ops.RECEIVE_INCOMING_MESSAGE) == 1);
  }

  @Test
  @DisplayName("a call that waited for the window and went out with little of its time left does not count towards"
      + " timeoutsToDown: a slow peer that answers every call within its time stays up")
  void backlogTimeoutsDoNotMakeAPeerDown() {
    // GIVEN a peer that answers each call after 1 s, a window of one call, and one timeout enough to be down
    StubPeer slow = world.stub().respond(Ops.GET_DM_DELIVERY_STATUS, (op, payload) -> {
      Promise<Object> answer = Promise.promise();
      vertx.setTimer(1_000, id -> answer.complete(ShineClient.object()));
      return answer.future();
    });
    TestServer server = server("{\"limits\":{\"maxInFlightPerConnection\":1},\"delivery\":{\"timeoutsToDown\":1}}");
    publishCardRoutedTo(server, "dave", slow);
    await(call(server, slow.url(), Ops.GET_DM_DELIVERY_STATUS));

    // WHEN two calls of 1.5 s each are made at once: the first is answered after 1 s; the second waits for it, goes
    // out with about 0.5 s left and times out before its answer
    Future<PeerResponse> first = call(server, slow.url(), Ops.GET_DM_DELIVERY_STATUS, 1_500);
    Future<PeerResponse> second = call(server, slow.url(), Ops.GET_DM_DELIVERY_STATUS, 1_500);
    await(first.otherwiseEmpty());
    await(second.otherwiseEmpty());
    assertThat(second.failed()).as("the second call runs out of time").isTrue();

    // THEN the peer is still up: the next call goes out and is answered
    assertThat(await(call(server, slow.url(), Ops.GET_DM_DELIVERY_STATUS)).payload().isObject()).isTrue();
  }

  @Test
  @DisplayName("a peer that is down costs no connect per call: calls fail at once with 503 while one reconnect loop"
      + " runs, and its return is published on peer.up (PROTOCOL 7.6)")
  void downPeerFailsFast() {
    int port = TestServer.freePort();
    StubPeer peer = StubPeer.start(vertx, port).acceptEverything();
    TestServer server = server("{}");
    publishCardRoutedTo(server, "dave", peer);
    await(call(server, peer.url(), Ops.GET_DM_DELIVERY_STATUS));
    List<String> returned = new java.util.concurrent.CopyOnWriteArrayList<>();
    server.vertx().eventBus().<String>localConsumer(Addresses.PEER_UP, m -> returned.add(m.body()));

    // GIVEN the peer's port now takes TCP connections and drops them: no WebSocket can open
    peer.close();
    java.util.concurrent.atomic.AtomicInteger accepted = new java.util.concurrent.atomic.AtomicInteger();
    io.vertx.core.net.NetServer[] refusers = new io.vertx.core.net.NetServer[1];
    // the port was just given up by the stub: take it as soon as the system lets us
    Eventually.until("the refuser listens on the peer's port", WAIT_MS, () -> {
      io.vertx.core.net.NetServer candidate = vertx.createNetServer().connectHandler(socket -> {
        accepted.incrementAndGet();
        socket.close();
      });
      refusers[0] = candidate;
      return await(candidate.listen(port, "127.0.0.1").map(true).otherwise(false));
    });
    io.vertx.core.net.NetServer refuser = refusers[0];
    world.onClose(() -> refuser.close().await());
    Eventually.until("the node has found the peer down", WAIT_MS, () -> {
      Future<PeerResponse> probe = call(server, peer.url(), Ops.GET_DM_DELIVERY_STATUS);
      await(probe.otherwiseEmpty());
      return probe.failed() && probe.cause().getMessage().contains("is down");
    });

    // WHEN 50 calls are made
    int connectsBefore = accepted.get();
    for (int i = 0; i < 50; i++) {
      assertFailure(call(server, peer.url(), Ops.GET_DM_DELIVERY_STATUS), 503, ErrorCode.PEER_UNAVAILABLE);
    }

    // THEN none of them connected (only the reconnect loop does, every few seconds at most)
    assertThat(accepted.get() - connectsBefore).as("connects during 50 calls").isLessThanOrEqualTo(1);

    // WHEN the peer answers again, THEN the node notices by itself and says so
    await(refuser.close());
    StubPeer[] started = new StubPeer[1];
    Eventually.until("the peer listens again on its port", WAIT_MS, () -> {
      try {
        started[0] = StubPeer.start(vertx, port);
        return true;
      } catch (Exception portStillTaken) {
        return false;
      }
    });
    StubPeer back = started[0].acceptEverything();
    world.onClose(back::close);
    Eventually.until("peer.up names the peer", WAIT_MS, () -> returned.contains(peer.url()));
    assertThat(await(call(server, peer.url(), Ops.GET_DM_DELIVERY_STATUS)).payload().isObject()).isTrue();
  }

  @Test
  @DisplayName("a configured peer that takes each connection and drops it during the server login is dialed with a"
      + " growing backoff, a few times in seconds, not every 250 ms")
  void flappingPeerBacksOff() throws InterruptedException {
    StubPeer[] holder = new StubPeer[1];
    StubPeer flapping = world.stub().named("s8").respond("ServerAuthChallenge", (op, payload) -> {
      holder[0].dropConnections(); // as a peer whose database refuses it does: the login never completes
      return Promise.promise().future();
    });
    holder[0] = flapping;
    server("{\"peers\":[{\"serverLogin\":\"s8\",\"url\":\"" + flapping.url() + "\"}]}");
    Eventually.until("the node dialed the peer three times", WAIT_MS, () -> flapping.connectionsAccepted() >= 3);

    // WHEN 4 s pass (a loop that started afresh on each connection would dial 16 to 32 times)
    int before = flapping.connectionsAccepted();
    Thread.sleep(4_000);

    // THEN the waits doubled: 0.5-1 s, 1-2 s, 2-4 s (jittered) after the third
    assertThat(flapping.connectionsAccepted() - before).as("dials in 4 s").isBetween(1, 4);
  }

  // ---- helpers -------------------------------------------------------------------------------------------

  private TestServer server(String overridesJson) {
    return world.server("s1", overridesJson);
  }

  /** Publishes, on {@code server}, the card of a user whose only access server is {@code peer}. */
  private void publishCardRoutedTo(TestServer server, String login, StubPeer peer) {
    world.user(login, List.of(Map.entry(peer.serverLogin(), peer.url())), server);
  }

  /** A call made through the node's own bus, as its verticles make them (records need that node's Vertx). */
  private static Future<PeerResponse> call(TestServer server, String url, String op) {
    return call(server, url, op, CALL_TIMEOUT_MS);
  }

  /** As above, with its own timeout. */
  private static Future<PeerResponse> call(TestServer server, String url, String op, long timeoutMs) {
    ObjectNode payload = ShineClient.object().put("messageKey", "alice|dave|1|1|2");
    return BusReplies.request(server.vertx().eventBus(), Addresses.PEER_REQUEST,
        new PeerRequest(url, op, payload, timeoutMs, false));
  }

  private static void assertFailure(Future<?> call, int status, String code) {
    await(call.otherwiseEmpty());
    assertThat(call.failed()).as("the call fails").isTrue();
    assertThat(call.cause()).isInstanceOfSatisfying(ProtocolException.class, e -> {
      assertThat(e.status()).as("status of [%s]", e.getMessage()).isEqualTo(status);
      assertThat(e.code()).as("code of [%s]", e.getMessage()).isEqualTo(code);
    });
  }

  private static <T> T await(Future<T> future) {
    try {
      return future.await(WAIT_MS, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("no answer within " + WAIT_MS + " ms", e);
    }
  }
}
