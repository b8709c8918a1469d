package org.shine.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shine.server.delivery.DeliveryTestbed.url;

import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.dm.KeyFile;
import org.shine.server.model.DeliveryState;
import org.shine.server.protocol.Ops;
import org.shine.server.support.Eventually;
import org.shine.server.support.Opened;

/**
 * The path of a send through one node (SendPairService → PairIntake → EngineClient → DeliveryEngine, and the
 * forward to the sender's sibling): each user is read from the directory once.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class OneReadPerSendTest {
  private final Opened opened = new Opened();

  @AfterEach
  void close() {
    opened.closeAll();
  }

  @Test
  @DisplayName("a send reads its sender and its recipient once each: the first attempt and the forward use the"
      + " users the intake read")
  void oneReadPerUser(Vertx vertx) {
    // GIVEN alice on s1 (this node) and s2, bob on s3 and s4, all answering
    DeliveryTestbed bed = new DeliveryTestbed(vertx, opened, "{}");
    KeyFile alice = bed.user("alice", "s1", "s2");
    bed.user("bob", "s3", "s4");
    vertx.deployVerticle(new DeliveryEngineVerticle(bed.services())).await();
    vertx.deployVerticle(new DeliveryVerticle(bed.services())).await();
    SignedPair pair = bed.pair("alice", alice, "bob");

    // WHEN alice sends the pair
    SendPairResult result = BusReplies.<SendPairResult>request(vertx.eventBus(), Addresses.DM_SEND_PAIR,
        new SendPairCommand("alice", pair.incoming().bytes(), pair.outgoing().bytes(), "session-1")).await();

    // THEN it is delivered and forwarded to s2, and each user was read once
    assertThat(result.deliveryState()).isEqualTo(DeliveryState.DELIVERED);
    Eventually.until("the pair is forwarded to alice's sibling", 20_000,
        () -> bed.peers().calls(url("s2"), Ops.RECEIVE_OUTCOMING_MESSAGE) == 1);
    assertThat(bed.users().reads("alice")).isEqualTo(1);
    assertThat(bed.users().reads("bob")).isEqualTo(1);
  }
}
