package org.shine.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.support.Eventually;
import org.shine.server.support.MutableClock;
import org.shine.server.support.Opened;
import org.shine.server.support.TestDatabase;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;

/**
 * PROTOCOL §7.6 with the seed's real schedule (0, 30 s, 5 min, ...): while the recipient's servers are down the
 * attempts fail, and when they answer again the waiting rows get an extra attempt at once, on both of the
 * sender's servers. The servers' clock stands still (only one second passes, at the restart), so no schedule point
 * can come due: a delivery here can only be the extra attempt.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class PeerReturnIT {
  private final Opened opened = new Opened();

  @AfterEach
  void close() {
    opened.closeAll();
  }

  @Test
  @DisplayName("a recipient server that answers again gets the waiting messages at once, not at the next point")
  void returnTriggersExtraAttempt(Vertx vertx) {
    waitingMessagesGoOnReturn(vertx, Duration.ofSeconds(1));
  }

  @Test
  @DisplayName("after the sender's servers' clock moved 9 minutes back, a returning recipient server still gets the"
      + " waiting messages at once")
  void returnAfterClockMovedBack(Vertx vertx) {
    // rows written before the move carry times ahead of the new clock; they were not touched since the return
    waitingMessagesGoOnReturn(vertx, Duration.ofMinutes(-9));
  }

  private void waitingMessagesGoOnReturn(Vertx vertx, Duration clockMove) {
    MutableClock clock = MutableClock.now();
    TestDatabase[] dbs = new TestDatabase[4];
    int[] ports = new int[4];
    TestServer[] s = new TestServer[4];
    for (int i = 0; i < 4; i++) {
      dbs[i] = opened.keep(TestDatabase.create(vertx));
      ports[i] = TestServer.freePort();
      s[i] = TestServer.start("s" + (i + 1), dbs[i].config(), clock, "{}", ports[i]);
    }
    opened.keep(s[0]);
    opened.keep(s[1]);
    String[] all = {s[0].url(), s[1].url(), s[2].url(), s[3].url()};
    TestUser alice = TestUser.create("alice")
        .publish(vertx, List.of(Map.entry("s1", all[0]), Map.entry("s2", all[1])), 1, all);
    TestUser bob = TestUser.create("bob")
        .publish(vertx, List.of(Map.entry("s3", all[2]), Map.entry("s4", all[3])), 1, all);
    ShineClient aliceOnS1 = opened.keep(alice.session(vertx, s[0]));
    ShineClient aliceOnS2 = opened.keep(alice.session(vertx, s[1]));
    List<JsonNode> events = new CopyOnWriteArrayList<>();
    aliceOnS1.onEvent(events::add);

    // GIVEN bob's two servers are down when alice sends
    s[2].close();
    s[3].close();
    SignedPair pair = ShineClient.signPair("alice", alice.key(), "bob", clock.millis(), ShineClient.randomNonce(),
        0, "are you there?".getBytes(StandardCharsets.UTF_8));
    assertThat(aliceOnS1.sendPair(pair).await().get("deliveryState").asText()).isEqualTo("accepted");
    String baseKey = pair.outgoing().baseKey();
    Pool sql1 = opened.pool(dbs[0]);
    Pool sql2 = opened.pool(dbs[1]);
    Eventually.until("s2 has the forwarded pair and has tried it too", 20_000,
        () -> attempts(sql2, baseKey) == 1);
    assertThat(attempts(sql1, baseKey)).isEqualTo(1);

    // WHEN bob's servers answer again (the clock moved a little, or back; the 30 s point is far either way)
    clock.advance(clockMove);
    long restarted = System.nanoTime();
    TestServer s3 = opened.keep(TestServer.start("s3", dbs[2].config(), clock, "{}", ports[2]));
    opened.keep(TestServer.start("s4", dbs[3].config(), clock, "{}", ports[3]));

    // THEN both of alice's servers deliver by an extra attempt: the schedule still counts one attempt made
    Eventually.until("s1 and s2 record the delivery", 20_000,
        () -> "delivered".equals(state(sql1, baseKey)) && "delivered".equals(state(sql2, baseKey)));
    System.out.printf("delivered on both of alice's servers %d ms after bob's servers were started again%n",
        (System.nanoTime() - restarted) / 1_000_000);
    assertThat(attempts(sql1, baseKey)).as("no scheduled attempt ran on s1").isEqualTo(1);
    assertThat(attempts(sql2, baseKey)).as("no scheduled attempt ran on s2").isEqualTo(1);
    Eventually.until("alice's session hears of it", 5_000, () -> events.stream().anyMatch(e ->
        e.path("op").asText().equals("DmDeliveryStateChanged")
            && e.at("/payload/deliveryState").asText().equals("delivered")));
    ShineClient bobOnS3 = opened.keep(bob.session(vertx, s3));
    JsonNode history = bobOnS3.request("GetDirectMessages", ShineClient.object().put("peer", "alice")).await();
    assertThat(history.get("messages")).hasSize(1);
    assertThat(aliceOnS2.request("GetDirectMessages", ShineClient.object().put("peer", "bob")).await()
        .at("/messages/0/deliveryState").asText()).isEqualTo("delivered");
  }

  private static int attempts(Pool sql, String baseKey) {
    Row row = first(sql, baseKey);
    return row == null ? -1 : row.getInteger("attempts");
  }

  private static String state(Pool sql, String baseKey) {
    Row row = first(sql, baseKey);
    return row == null ? null : row.getString("state");
  }

  private static Row first(Pool sql, String baseKey) {
    var rows = sql.preparedQuery("SELECT state, attempts FROM dm_delivery WHERE base_key = $1 AND revision = 0")
        .execute(Tuple.of(baseKey)).await();
    return rows.size() == 0 ? null : rows.iterator().next();
  }
}
