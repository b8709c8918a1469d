package org.shine.server.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.support.Eventually;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/**
 * Attack 5 of issue 16 with a loopback stand-in for an internal host (PROTOCOL §13): 127.0.0.9 is denied by
 * {@code denyCidrs}, and a listener there counts every connection made to it. A card naming it is refused at
 * publish; a route to it stored before the policy is never dialed (deliveries, sync); a configured peer there is.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class EgressIT {
  private static final String DENIED_HOST = "127.0.0.9";
  private static final ObjectNode POLICY = TestServer.json(
      "{\"egress\":{\"allowCidrs\":[\"127.0.0.0/8\"],\"denyCidrs\":[\"127.0.0.9/32\"]}}");
  private static final ObjectNode FAST = TestServer.json("{\"delivery\":{\"scheduleMs\":[0,300,600,900,1200],"
      + "\"workerPeriodMs\":50,\"callTimeoutMs\":1000},\"sync\":{\"periodMs\":100}}");
  private TestWorld world;
  private NetServer internal;
  private final AtomicInteger connections = new AtomicInteger();

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx);
    internal = vertx.createNetServer().connectHandler(socket -> {
      connections.incrementAndGet();
      socket.close();
    });
    internal.listen(0, DENIED_HOST).await();
  }

  @AfterEach
  void close() {
    world.close();
    internal.close().await();
  }

  private String internalUrl() {
    return "ws://" + DENIED_HOST + ":" + internal.actualPort() + "/ws";
  }

  @Test
  @DisplayName("a card whose route names a refused address is 400 ROUTE_NOT_ALLOWED, and nothing is stored")
  void refusedAtPublish(Vertx vertx) {
    TestServer s1 = world.server("s1", POLICY);
    TestUser eve = TestUser.create("eve");
    ShineClient client = world.anonymous(s1);

    assertThatThrownBy(() -> client.publishCard("eve", eve.key(), List.of(Map.entry("s1", s1.url()),
        Map.entry(DENIED_HOST, internalUrl())), 1).await())
        .isInstanceOfSatisfying(ShineClientException.class, e -> {
          assertThat(e.status()).isEqualTo(400);
          assertThat(e.code()).isEqualTo(ErrorCode.ROUTE_NOT_ALLOWED);
        });

    assertThat(world.sql(s1).count("SELECT count(*) FROM user_card WHERE login = 'eve'")).isZero();
    assertThat(connections.get()).isZero();
  }

  @Test
  @DisplayName("routes to a refused address stored before the policy are never dialed: deliveries and sync cost no"
      + " connection there, the message stays accepted")
  void storedRoutesNeverDialed(Vertx vertx) {
    // GIVEN eve (only there) and frank (s1 and there) were accepted before the operator denied the address
    TestServer before = world.server("s1", FAST);
    TestUser alice = world.user("alice", before);
    TestUser eve = world.user("eve", List.of(Map.entry(DENIED_HOST, internalUrl())), before);
    world.user("frank", List.of(Map.entry("s1", before.url()), Map.entry(DENIED_HOST, internalUrl())), before);
    before.close();
    TestServer s1 = world.server("s1", TestServer.merge(POLICY, FAST));
    connections.set(0);

    // WHEN alice writes to eve, and s1's sync would pull frank's pages from his other server
    String sent = world.session(alice, s1).sendPair(alice.pairTo(eve, "are you inside?")).await()
        .path("deliveryState").asText();
    world.awaitRetryRounds(s1, 3);

    // THEN the internal address saw no connection at all, and the message was never delivered
    assertThat(sent).isEqualTo("accepted");
    assertThat(connections.get()).isZero();
    assertThat(world.sql(s1).count("SELECT count(*) FROM dm_delivery WHERE owner = 'alice' AND state = 'delivered'"))
        .isZero();
  }

  @Test
  @DisplayName("a newer card relayed by a peer for a login known here is kept, its refused route unreachable; the"
      + " same card from a client is 400 ROUTE_NOT_ALLOWED")
  void relayedCardKept(Vertx vertx) {
    StubPeer relay = world.stub().named("relay");
    TestServer s1 = world.server("s1", TestServer.merge(POLICY, FAST, TestServer.peersAt("relay", relay.url())));
    TestUser eve = world.user("eve", List.of(Map.entry("s1", s1.url())), s1);
    List<Map.Entry<String, String>> moved = List.of(Map.entry("s1", s1.url()), Map.entry(DENIED_HOST, internalUrl()));

    assertThatThrownBy(() -> world.anonymous(s1).publishCard("eve", eve.key(), moved, 2).await())
        .isInstanceOfSatisfying(ShineClientException.class, e -> assertThat(e.code())
            .isEqualTo(ErrorCode.ROUTE_NOT_ALLOWED));
    ShineClient asRelay = world.keep(relay.sessionOn(vertx, s1.url()));
    asRelay.publishCard("eve", eve.key(), moved, 2).await();

    assertThat(world.sql(s1).count("SELECT version FROM user_card WHERE login = 'eve'")).isEqualTo(2);
    world.awaitRetryRounds(s1, 2);
    assertThat(connections.get()).isZero();
  }

  @Test
  @DisplayName("a configured peer at a refused address is dialed all the same (operators' peers are always allowed)")
  void configuredPeerDialed() {
    world.server("s1", TestServer.merge(POLICY, TestServer.peersAt("inside", internalUrl())));

    Eventually.until("s1 dials its configured peer", 15_000, () -> connections.get() >= 1);
  }
}
