package org.shine.server.peer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.client.ShineClient;
import org.shine.server.db.Database;
import org.shine.server.db.ServerKeyRepository;
import org.shine.server.dm.KeyFile;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.node.LocalCodecs;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Ops;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.support.Eventually;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestWorld;

/**
 * The peer-connection table when it is full (PROTOCOL §13): the least recently used connection that is down or
 * idle makes room for a new one; a live, busy one never does. A {@link PeerVerticle} with a table of two runs on a
 * Vert.x of its own over the database of a real server, where the cards naming the stubs as routes are published.
 * Every stub answers {@code GetDmDeliveryStatus} at once and never answers {@code ReceiveIncomingMessage}. (The
 * server itself also connects to each stub, to relay the card: a stub's open connections are counted from there.)
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class PeerTableIT {
  private static final long WAIT_MS = 20_000;
  private static final long LONG_MS = 60_000;
  private Vertx node;
  private TestWorld world;
  private TestServer server;

  @BeforeEach
  void setUp(Vertx vertx) {
    world = TestWorld.on(vertx);
    server = world.server("s1", "{\"delivery\":{\"timeoutsToDown\":1,\"callTimeoutMs\":60000}}");
    node = Vertx.vertx();
    LocalCodecs.register(node);
    PeerServices services = new PeerServices(server.config(), new ServerIdentity("s1", server.url(),
        KeyFile.generate(null).privateKey()), new SignatureVerifier(node, 100), Clock.systemUTC(),
        ShineMetrics.disabled(), new ServerKeyRepository(Database.sharedPool(node, server.config().db())));
    node.deployVerticle(new PeerVerticle(services, Future.succeededFuture(), 2)).await();
  }

  @AfterEach
  void tearDown() {
    node.close().await();
    world.close();
  }

  @Test
  @DisplayName("a full table closes its least recently used idle connection for a new one, never a live, busy one;"
      + " with every one live and busy, a new one is refused 503 PEER_BUSY")
  void evictsIdleNeverBusy() {
    StubPeer a = stub();
    StubPeer b = stub();
    StubPeer c = stub();
    StubPeer d = stub();
    // GIVEN b is busy (a call it never answers), then a is used and idle: b is the least recently used
    call(b, Ops.RECEIVE_INCOMING_MESSAGE, LONG_MS);
    Eventually.until("b holds a call", WAIT_MS, () -> b.count(Ops.RECEIVE_INCOMING_MESSAGE) == 1);
    await(call(a, Ops.GET_DM_DELIVERY_STATUS, LONG_MS));
    int aOpen = a.openConnections();
    int dAccepted = d.connectionsAccepted();

    // WHEN a third server is called
    await(call(c, Ops.GET_DM_DELIVERY_STATUS, LONG_MS));

    // THEN a, idle, made room; b, busy though used longer ago, stayed
    assertThat(table()).containsExactlyInAnyOrder(b.url(), c.url());
    Eventually.until("a's connection is closed", WAIT_MS, () -> a.openConnections() == aOpen - 1);

    // WHEN d is called while b and c are both busy
    call(c, Ops.RECEIVE_INCOMING_MESSAGE, LONG_MS);
    Eventually.until("c holds a call", WAIT_MS, () -> c.count(Ops.RECEIVE_INCOMING_MESSAGE) == 1);
    Future<PeerResponse> refused = call(d, Ops.GET_DM_DELIVERY_STATUS, LONG_MS);

    // THEN d is refused without a connection, and b and c keep theirs
    assertFailure(refused, 503, ErrorCode.PEER_BUSY);
    assertThat(d.connectionsAccepted()).isEqualTo(dAccepted);
    assertThat(d.count(Ops.GET_DM_DELIVERY_STATUS)).isZero();
    assertThat(table()).containsExactlyInAnyOrder(b.url(), c.url());
  }

  @Test
  @DisplayName("a full table closes a connection that is down, even one more recently used and probing, before"
      + " refusing a new one")
  void evictsDown() {
    StubPeer live = stub();
    StubPeer tarpit = stub();
    StubPeer next = stub();
    // GIVEN live is busy, then the tarpit's call times out (timeoutsToDown 1): it is down, its probe in flight
    call(live, Ops.RECEIVE_INCOMING_MESSAGE, LONG_MS);
    Eventually.until("live holds a call", WAIT_MS, () -> live.count(Ops.RECEIVE_INCOMING_MESSAGE) == 1);
    assertFailure(call(tarpit, Ops.RECEIVE_INCOMING_MESSAGE, 300), 503, ErrorCode.PEER_TIMEOUT);
    Eventually.until("the tarpit is probed", WAIT_MS, () -> tarpit.count(Ops.RECEIVE_INCOMING_MESSAGE) == 2);
    // a call to it now fails at once, and makes it the most recently used
    assertFailure(call(tarpit, Ops.GET_DM_DELIVERY_STATUS, LONG_MS), 503, ErrorCode.PEER_UNAVAILABLE);
    int tarpitOpen = tarpit.openConnections();

    // WHEN a third server is called
    await(call(next, Ops.GET_DM_DELIVERY_STATUS, LONG_MS));

    // THEN the tarpit made room, the live one stayed
    assertThat(table()).containsExactlyInAnyOrder(live.url(), next.url());
    Eventually.until("the tarpit's connection is closed", WAIT_MS,
        () -> tarpit.openConnections() == tarpitOpen - 1);
  }

  /** The URLs of the node's peer-connection table, as its admin API would list them. */
  private List<String> table() {
    PeerStatus.All all = BusReplies.<PeerStatus.All>request(node.eventBus(), Addresses.PEER_STATUS, "status",
        WAIT_MS).await();
    return all.peers().stream().map(PeerStatus::url).toList();
  }

  /** A stub that answers GetDmDeliveryStatus at once and never ReceiveIncomingMessage, named in a card's route. */
  private StubPeer stub() {
    StubPeer stub = world.stub().respond(Ops.GET_DM_DELIVERY_STATUS, (op, payload) -> ShineClient.object())
        .respond(Ops.RECEIVE_INCOMING_MESSAGE, (op, payload) -> Promise.promise().future());
    world.user(TestWorld.unique("dave"), List.of(Map.entry(stub.serverLogin(), stub.url())), server);
    return stub;
  }

  private Future<PeerResponse> call(StubPeer peer, String op, long timeoutMs) {
    ObjectNode payload = ShineClient.object().put("messageKey", "alice|dave|1|1|2");
    return BusReplies.request(node.eventBus(), Addresses.PEER_REQUEST,
        new PeerRequest(peer.url(), op, payload, timeoutMs, false), timeoutMs + 5_000);
  }

  private static void assertFailure(Future<?> call, int status, String code) {
    await(call.otherwiseEmpty());
    assertThat(call.failed()).as("the call fails").isTrue();
    assertThat(call.cause()).isInstanceOfSatisfying(ProtocolException.class, ex -> {
      assertThat(ex.status()).as("status of [%s]", ex.getMessage()).isEqualTo(status);
      assertThat(ex.code()).as("code of [%s]", ex.getMessage()).isEqualTo(code);
    });
  }

  private static <T> T await(Future<T> future) {
    try {
      return future.await(WAIT_MS, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException ex) {
      throw new AssertionError("no answer within " + WAIT_MS + " ms", ex);
    }
  }
}
