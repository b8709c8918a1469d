package org.shine.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.support.Eventually;
import org.shine.server.support.MutableClock;
import org.shine.server.support.Scrape;
import org.shine.server.support.Sql;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/**
 * PROTOCOL §7.6 with the seed's real schedule (0, 30 s, 5 min, ...): while the recipient's servers are down the
 * attempts fail, and when they answer again the waiting rows get an extra attempt at once, on both of the
 * sender's servers. The servers' clock stands still (only one second passes, at the restart), so no schedule point
 * can come due: a delivery here can only be the extra attempt.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class PeerReturnIT {
  private final MutableClock clock = MutableClock.now();
  private TestWorld world;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx).clock(clock);
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("a recipient server that answers again gets the waiting messages at once, not at the next point")
  void returnTriggersExtraAttempt() {
    waitingMessagesGoOnReturn(Duration.ofSeconds(1));
  }

  @Test
  @DisplayName("after the sender's servers' clock moved 9 minutes back, a returning recipient server still gets the"
      + " waiting messages at once")
  void returnAfterClockMovedBack() {
    // rows written before the move carry times ahead of the new clock; they were not touched since the return
    waitingMessagesGoOnReturn(Duration.ofMinutes(-9));
  }

  @Test
  @DisplayName("a returning recipient server gets 150 waiting messages over the one connection each sender server"
      + " dials to it: one reconnect loop per server while it was down, no herd when it is back")
  void noHerdOnReturn() {
    TestWorld.Federation f = world.federation();
    TestUser alice = f.alice();
    ShineClient aliceOnS1 = world.session(alice, f.s1());
    // GIVEN bob's two servers are down while alice sends 150 messages
    f.s3().close();
    f.s4().close();
    Sql sql1 = world.sql(f.s1());
    for (int i = 0; i < 150; i++) {
      SignedPair pair = alice.pairTo("bob", clock.millis(), ("waiting " + i).getBytes(StandardCharsets.UTF_8));
      assertThat(aliceOnS1.sendPair(pair).await().get("deliveryState").asText()).isEqualTo("accepted");
    }
    Scrape before = Scrape.of(f.s1());
    assertThat(before.count("shine_peer_dials_total", "peer", "s3", "outcome", "failed"))
        .as("one loop's tries while s3 was down, not one per message").isLessThan(150);

    // WHEN bob's servers answer again (a second later: rows touched since the return are not claimed again)
    clock.advance(Duration.ofSeconds(1));
    world.restart(f.s3());
    world.restart(f.s4());

    // THEN every message is delivered, each server having been dialed once by s1
    Eventually.until("s1 records all 150 delivered", 60_000, () -> sql1.count(
        "SELECT count(*) FROM dm_delivery WHERE owner = $1 AND state = 'delivered'", alice.login()) == 150);
    // one ACK is delivered: s3, back first, may have taken all 150 before s1's reconnect loop reached s4 again
    Eventually.until("s1 has dialed s4 again", 60_000, () -> Scrape.of(f.s1())
        .count("shine_peer_dials_total", "peer", "s4", "outcome", "opened")
        > before.count("shine_peer_dials_total", "peer", "s4", "outcome", "opened"));
    Scrape after = Scrape.of(f.s1());
    for (String server : List.of("s3", "s4")) {
      assertThat(after.count("shine_peer_dials_total", "peer", server, "outcome", "opened")
          - before.count("shine_peer_dials_total", "peer", server, "outcome", "opened"))
          .as("connections s1 opened to " + server + " after its return").isEqualTo(1);
    }
    assertThat(sql1.count("SELECT count(*) FROM dm_delivery WHERE owner = $1 AND attempts > 1", alice.login()))
        .as("no scheduled attempt ran: the clock stands still; each went by the return's extra attempt").isZero();
  }

  private void waitingMessagesGoOnReturn(Duration clockMove) {
    TestWorld.Federation f = world.federation();
    TestUser alice = f.alice();
    TestUser bob = f.bob();
    ShineClient aliceOnS1 = world.session(alice, f.s1());
    ShineClient aliceOnS2 = world.session(alice, f.s2());
    List<JsonNode> events = new CopyOnWriteArrayList<>();
    aliceOnS1.onEvent(events::add);

    // GIVEN bob's two servers are down when alice sends
    f.s3().close();
    f.s4().close();
    SignedPair pair = alice.pairTo("bob", clock.millis(), "are you there?".getBytes(StandardCharsets.UTF_8));
    assertThat(aliceOnS1.sendPair(pair).await().get("deliveryState").asText()).isEqualTo("accepted");
    String baseKey = pair.outgoing().baseKey();
    Sql sql1 = world.sql(f.s1());
    Sql sql2 = world.sql(f.s2());
    Eventually.until("s2 has the forwarded pair and has tried it too", 20_000, () -> sql2.attempts(baseKey) == 1);
    assertThat(sql1.attempts(baseKey)).isEqualTo(1);

    // WHEN bob's servers answer again (the clock moved a little, or back; the 30 s point is far either way)
    clock.advance(clockMove);
    long restarted = System.nanoTime();
    TestServer s3 = world.restart(f.s3());
    world.restart(f.s4());

    // THEN both of alice's servers deliver by an extra attempt: the schedule still counts one attempt made
    Eventually.until("s1 and s2 record the delivery", 20_000,
        () -> "delivered".equals(sql1.state(baseKey)) && "delivered".equals(sql2.state(baseKey)));
    System.out.printf("delivered on both of alice's servers %d ms after bob's servers were started again%n",
        (System.nanoTime() - restarted) / 1_000_000);
    assertThat(sql1.attempts(baseKey)).as("no scheduled attempt ran on s1").isEqualTo(1);
    assertThat(sql2.attempts(baseKey)).as("no scheduled attempt ran on s2").isEqualTo(1);
    Eventually.until("alice's session hears of it", 5_000, () -> events.stream().anyMatch(e ->
        e.path("op").asText().equals("DmDeliveryStateChanged")
            && e.at("/payload/deliveryState").asText().equals("delivered")));
    // the first ACK may be s4's: s3 then has the copy from its own call or, at the latest, by sync from s4
    ShineClient bobOnS3 = world.session(bob, s3);
    Eventually.until("bob's history on s3 holds the message once", 20_000, () -> bobOnS3.request("GetDirectMessages",
        ShineClient.object().put("peer", "alice")).await().get("messages").size() == 1);
    assertThat(aliceOnS2.request("GetDirectMessages", ShineClient.object().put("peer", "bob")).await()
        .at("/messages/0/deliveryState").asText()).isEqualTo("delivered");
  }
}
