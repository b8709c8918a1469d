package org.shine.server.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
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
import org.shine.server.client.ShineClientException;
import org.shine.server.dm.DmContainer;
import org.shine.server.support.Eventually;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/** Read receipts and tombstones across a four-server federation (alice on s1+s2, bob on s3+s4). */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class ReceiptsAndTombstonesIT {
  private TestWorld world;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx).config(SyncIT.FAST);
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("a read receipt travels end to end across four servers; a tombstone deletes on both servers")
  void receiptAndTombstone() {
    TestWorld.Federation f = world.federation();
    TestServer[] s = {f.s1(), f.s2(), f.s3(), f.s4()};
    TestUser alice = f.alice();
    TestUser bob = f.bob();
    ShineClient aliceOnS1 = world.session(alice, s[0]);
    List<JsonNode> aliceEvents = new CopyOnWriteArrayList<>();
    aliceOnS1.onEvent(aliceEvents::add);
    SignedPair pair = alice.pairTo(bob, "read me");
    assertThat(aliceOnS1.sendPair(pair).await().get("deliveryState").asText()).isEqualTo("delivered");
    String baseKey = pair.outgoing().baseKey();

    // WHEN bob reads it on s3
    ShineClient bobOnS3 = world.session(bob, s[2]);
    long readAt = System.currentTimeMillis();
    DmContainer receipt = ShineClient.signReceipt("bob", bob.key(), "alice", baseKey, readAt);
    JsonNode sent = bobOnS3.sendReadReceipt(receipt).await();

    // THEN alice's session gets DmReadReceipt, and every server shows the message read
    assertThat(sent.get("deliveryState").asText()).isEqualTo("delivered");
    assertThat(bobOnS3.sendReadReceipt(receipt).await().get("deliveryState").asText())
        .as("a repeated receipt reports the stored state").isEqualTo("delivered");
    assertThat(sent.get("baseKey").asText()).isEqualTo(baseKey);
    Eventually.until("alice's session gets the receipt", 5_000, () -> aliceEvents.stream()
        .anyMatch(e -> e.get("op").asText().equals("DmReadReceipt")));
    JsonNode event = aliceEvents.stream().filter(e -> e.get("op").asText().equals("DmReadReceipt")).findFirst()
        .orElseThrow();
    assertThat(event.at("/payload/baseKey").asText()).isEqualTo(baseKey);
    assertThat(event.at("/payload/readerLogin").asText()).isEqualTo("bob");
    assertThat(event.at("/payload/readAtMs").asLong()).isEqualTo(readAt);
    for (int i = 0; i < 4; i++) {
      TestUser owner = i < 2 ? alice : bob;
      String peer = i < 2 ? "bob" : "alice";
      ShineClient session = world.session(owner, s[i]);
      int server = i;
      // the copy itself may still be on its way to a sibling (forward or sync): wait for it, read
      Eventually.until("s" + (i + 1) + " shows the message read", 10_000,
          () -> firstMessage(session, peer) != null && firstMessage(session, peer).get("read").asBoolean());
      assertThat(firstMessage(session, peer).get("baseKey").asText()).as("server s%d", server + 1)
          .isEqualTo(baseKey);
    }
    assertThat(firstMessage(aliceOnS1, "bob").get("deliveryState").asText()).isEqualTo("delivered");

    // WHEN alice deletes her copy on s1
    DmContainer tombstone = ShineClient.signTombstone("alice", alice.key(), "bob", pair.outgoing().messageKey(),
        System.currentTimeMillis());
    JsonNode deleted = aliceOnS1.deleteMessage(tombstone).await();

    // THEN it is deleted on s1 at once and on s2 by sync; bob's copies stay
    assertThat(deleted.get("messageKey").asText()).isEqualTo(pair.outgoing().messageKey());
    assertThat(firstMessage(aliceOnS1, "bob").get("deleted").asBoolean()).isTrue();
    ShineClient aliceOnS2 = world.session(alice, s[1]);
    Eventually.until("s2 shows it deleted", 10_000, () -> firstMessage(aliceOnS2, "bob") != null
        && firstMessage(aliceOnS2, "bob").get("deleted").asBoolean());
    assertThat(firstMessage(bobOnS3, "alice").get("deleted").asBoolean()).isFalse();
  }

  @Test
  @DisplayName("receipts and tombstones must refer to the right message and come from the session's user")
  void badSignals() {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    TestUser bob = world.user("bob", s1);
    ShineClient bobSession = world.session(bob, s1);
    long now = System.currentTimeMillis();

    // a receipt for a message bob sent himself, not one he received
    DmContainer wrongDirection = ShineClient.signReceipt("bob", bob.key(), "alice", "bob|alice|" + now + "|1", now);
    DmContainer byAlice = ShineClient.signReceipt("alice", alice.key(), "bob", "bob|alice|" + now + "|1", now);
    DmContainer othersCopy = ShineClient.signTombstone("bob", bob.key(), "alice", "alice|bob|" + now + "|1|2", now);

    assertRefused(() -> bobSession.sendReadReceipt(wrongDirection).await(), 400, "INVALID_FIELD");
    assertRefused(() -> bobSession.sendReadReceipt(byAlice).await(), 403, "FORBIDDEN_AUTHOR");
    assertRefused(() -> bobSession.deleteMessage(othersCopy).await(), 400, "INVALID_FIELD");
  }

  private static void assertRefused(Runnable call, int status, String code) {
    assertThatThrownBy(call::run).isInstanceOfSatisfying(ShineClientException.class, e -> {
      assertThat(e.status()).isEqualTo(status);
      assertThat(e.code()).isEqualTo(code);
    });
  }

  private static JsonNode firstMessage(ShineClient session, String peer) {
    return session.request("GetDirectMessages", ShineClient.object().put("peer", peer)).await()
        .get("messages").get(0);
  }
}
