package org.shine.server.peer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.support.Eventually;
import org.shine.server.support.Sql;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/**
 * PROTOCOL §7.6, a peer heard from is up: a server that started before its peers has them down, its reconnect loop
 * waiting up to 5 s between dials; when their server sessions reach it, it dials them at once, so a message sent
 * right then is delivered in the response instead of accepted (and left to a later attempt).
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class HeardFromIT {
  private TestWorld world;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx).sites("s1", "s3", "s4");
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("the recipient's servers start after the sender's: once their sessions reach it, a send is"
      + " delivered, not accepted")
  void peerHeardFromIsUp(Vertx vertx) {
    // GIVEN alice's and bob's cards on bob's servers s3 and s4 (which then stop, so that they start again below
    // with nothing left to do but to open their sessions)
    TestServer[] bobs = world.serversTogether("s3", "s4");
    List<Map.Entry<String, String>> aliceRoutes = List.of(Map.entry("s1", world.url("s1")));
    TestUser alice = world.user("alice", aliceRoutes, bobs);
    TestUser bob = world.user("bob", TestWorld.routes(bobs), bobs);
    bobs[0].close();
    bobs[1].close();
    // AND s1, started alone, has had s3 and s4 down for so long that its reconnect loop waits its longest (2.5-5 s)
    TestServer s1 = world.server("s1");
    alice.publish(vertx, aliceRoutes, 1, s1.url());
    bob.publish(vertx, TestWorld.routes(bobs), 1, s1.url());
    ShineClient aliceOnS1 = world.session(alice, s1);
    SignedPair pair = alice.pairTo(bob, "are you up yet?");
    for (TestServer down : bobs) {
      Eventually.until("s1's reconnect loop towards " + down.serverLogin() + " at its cap", 30_000,
          () -> TestWorld.peerStatus(s1, down).map(p -> p.down() && p.backoffMs() == PeerConnection.BACKOFF_MAX_MS)
              .orElse(false));
    }

    // WHEN s3 and s4 start together and their server sessions reach s1 (s1 accepted their logins)
    TestServer[] back = world.serversTogether("s3", "s4");
    for (TestServer server : back) {
      Eventually.until(server.serverLogin() + "'s server session with s1", 30_000,
          () -> TestWorld.peerStatus(server, s1).map(PeerStatus::authenticated).orElse(false));
    }
    JsonNode result = aliceOnS1.sendPair(pair).await();

    // THEN s1 has dialed them already: the message is delivered in the response
    assertThat(result.get("deliveryState").asText()).isEqualTo("delivered");
    Sql s1Sql = world.sql(s1);
    assertThat(s1Sql.state(pair)).isEqualTo("delivered");
    world.awaitPeersUp(s1, back);
  }
}
