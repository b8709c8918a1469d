package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
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

/**
 * The v2 client additions of PROTOCOL §5 for several devices: GetConversations (the chat list),
 * OutgoingDirectMessage (a sender's other sessions see what one of them sent) and DmReadByMe (a reader's other
 * sessions see what one of them read), on real servers over real WebSockets.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class MultiDeviceIT {
  private static final ObjectNode FAST = TestServer.json("""
      {"delivery": {"scheduleMs": [0, 400, 800, 1200, 1600], "workerPeriodMs": 50, "callTimeoutMs": 1000},
       "sync": {"periodMs": 200}}""");
  private TestWorld world;

  @BeforeEach
  void world(Vertx vertx) {
    world = TestWorld.on(vertx).config(FAST);
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("the chat list names each peer with its last message and the incoming messages without a receipt")
  void conversations() {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    TestUser bob = world.user("bob", s1);
    TestUser carol = world.user("carol", s1);
    ShineClient aliceSession = world.session(alice, s1);
    ShineClient carolSession = world.session(carol, s1);
    ShineClient bobSession = world.session(bob, s1);
    long t = System.currentTimeMillis() - 10_000;
    SignedPair first = send(aliceSession, alice, "bob", t, "one");
    SignedPair second = send(aliceSession, alice, "bob", t + 1, "two");
    SignedPair fromCarol = send(carolSession, carol, "bob", t + 2, "from carol");
    SignedPair reply = send(bobSession, bob, "alice", t + 3, "reply");

    // THEN bob's list: alice (his reply is the last, two unread from her), then carol (one unread)
    JsonNode list = bobSession.request("GetConversations", ShineClient.object()).await();
    assertThat(list.get("hasMore").asBoolean()).isFalse();
    JsonNode conversations = list.get("conversations");
    assertThat(conversations).hasSize(2);
    assertThat(conversations.get(0).get("peer").asText()).isEqualTo("alice");
    assertThat(conversations.get(0).get("lastMessageKey").asText()).isEqualTo(reply.outgoing().messageKey());
    assertThat(conversations.get(0).get("lastAtMs").asLong()).isEqualTo(t + 3);
    assertThat(conversations.get(0).get("lastDirection").asText()).isEqualTo("outgoing");
    assertThat(conversations.get(0).get("unread").asLong()).isEqualTo(2);
    assertThat(Base64.getDecoder().decode(conversations.get(0).get("lastBlobB64").asText()))
        .isEqualTo(reply.outgoing().bytes());
    assertThat(conversations.get(1).get("peer").asText()).isEqualTo("carol");
    assertThat(conversations.get(1).get("lastMessageKey").asText()).isEqualTo(fromCarol.incoming().messageKey());
    assertThat(conversations.get(1).get("lastDirection").asText()).isEqualTo("incoming");
    assertThat(conversations.get(1).get("unread").asLong()).isEqualTo(1);

    // WHEN bob reads alice's first message THEN one is left unread
    bobSession.sendReadReceipt(ShineClient.signReceipt("bob", bob.key(), "alice", first.outgoing().baseKey(),
        System.currentTimeMillis())).await();
    assertThat(bobSession.request("GetConversations", ShineClient.object()).await()
        .at("/conversations/0/unread").asLong()).isEqualTo(1);

    // paging: one per page, the second page starts before the first one's lastAtMs
    JsonNode page1 = bobSession.request("GetConversations", ShineClient.object().put("limit", 1)).await();
    assertThat(page1.get("conversations")).hasSize(1);
    assertThat(page1.get("hasMore").asBoolean()).isTrue();
    JsonNode page2 = bobSession.request("GetConversations", ShineClient.object().put("limit", 1)
        .put("beforeLastAtMs", page1.at("/conversations/0/lastAtMs").asLong())).await();
    assertThat(page2.at("/conversations/0/peer").asText()).isEqualTo("carol");
    assertThat(page2.get("hasMore").asBoolean()).isFalse();

    // a deleted last message gives way to the one before it
    aliceSession.deleteMessage(ShineClient.signTombstone("alice", alice.key(), "bob",
        reply.incoming().messageKey(), System.currentTimeMillis())).await();
    JsonNode aliceList = aliceSession.request("GetConversations", ShineClient.object()).await();
    assertThat(aliceList.at("/conversations/0/lastMessageKey").asText()).isEqualTo(second.outgoing().messageKey());
    assertThat(aliceList.at("/conversations/0/unread").asLong()).as("a deleted message is not unread").isZero();
    assertThat(carolSession.request("GetConversations", ShineClient.object().put("limit", 100)).await()
        .at("/conversations/0/peer").asText()).isEqualTo("bob");
  }

  @Test
  @DisplayName("GetConversations refuses bad fields with a clear code, needs a login, and the session survives")
  void conversationsBadInput() {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    ShineClient session = world.session(alice, s1);
    assertRefused(session, ShineClient.object().put("limit", 0), 400, "INVALID_FIELD");
    assertRefused(session, ShineClient.object().put("limit", 101), 400, "INVALID_FIELD");
    assertRefused(session, ShineClient.object().put("beforeLastAtMs", "soon"), 400, "INVALID_FIELD");
    assertRefused(session, ShineClient.object().put("peer", "bob"), 400, "UNKNOWN_FIELD");
    assertThat(session.request("GetConversations", ShineClient.object()).await().get("conversations")).isEmpty();
    ShineClient anonymous = world.anonymous(s1);
    assertRefused(anonymous, ShineClient.object(), 401, "NOT_AUTHENTICATED");
  }

  @Test
  @DisplayName("a sender's other sessions get OutgoingDirectMessage with the state, the sending one only its response")
  void outgoingToOtherSessions() {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    TestUser bob = world.user("bob", s1);
    ShineClient phone = world.session(alice, s1);
    ShineClient laptop = world.session(alice, s1);
    List<JsonNode> phoneEvents = events(phone);
    List<JsonNode> laptopEvents = events(laptop);
    ShineClient bobSession = world.session(bob, s1);

    SignedPair pair = send(phone, alice, "bob", System.currentTimeMillis(), "from the phone");

    JsonNode event = awaitEvent(laptopEvents, "OutgoingDirectMessage");
    assertThat(event.at("/payload/messageKey").asText()).isEqualTo(pair.outgoing().messageKey());
    assertThat(event.at("/payload/baseKey").asText()).isEqualTo(pair.outgoing().baseKey());
    assertThat(Base64.getDecoder().decode(event.at("/payload/blobB64").asText())).isEqualTo(pair.outgoing().bytes());
    assertThat(event.at("/payload/deliveryState").asText()).isEqualTo("delivered");
    // an identical resend is an ACK and tells nobody again
    phone.sendPair(pair).await();
    // a receipt reaches both of alice's sessions: once the phone has it, every earlier event would have come too
    bobSession.sendReadReceipt(ShineClient.signReceipt("bob", bob.key(), "alice", pair.outgoing().baseKey(),
        System.currentTimeMillis())).await();
    awaitEvent(phoneEvents, "DmReadReceipt");
    awaitEvent(laptopEvents, "DmReadReceipt");
    assertThat(ops(phoneEvents)).doesNotContain("OutgoingDirectMessage");
    assertThat(ops(laptopEvents)).containsOnlyOnce("OutgoingDirectMessage");

    // an edit (revision 1) reaches the other session with the new bytes
    SignedPair edit = ShineClient.signPair("alice", alice.key(), "bob", pair.outgoing().createdAtMs(),
        pair.outgoing().nonce(), 1, "edited".getBytes(StandardCharsets.UTF_8));
    laptop.sendPair(edit).await();
    Eventually.until("the phone gets the edit", 5_000, () -> phoneEvents.stream()
        .anyMatch(e -> e.get("op").asText().equals("OutgoingDirectMessage")));
    JsonNode edited = phoneEvents.stream().filter(e -> e.get("op").asText().equals("OutgoingDirectMessage"))
        .findFirst().orElseThrow();
    assertThat(Base64.getDecoder().decode(edited.at("/payload/blobB64").asText())).isEqualTo(edit.outgoing().bytes());
  }

  @Test
  @DisplayName("a reader's other sessions get DmReadByMe for a receipt one of them sent, the sending one does not")
  void readByMeToOtherSessions() {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    TestUser bob = world.user("bob", s1);
    ShineClient aliceSession = world.session(alice, s1);
    ShineClient bobPhone = world.session(bob, s1);
    ShineClient bobLaptop = world.session(bob, s1);
    List<JsonNode> phoneEvents = events(bobPhone);
    List<JsonNode> laptopEvents = events(bobLaptop);
    SignedPair pair = send(aliceSession, alice, "bob", System.currentTimeMillis(), "read me");
    long readAt = System.currentTimeMillis();
    DmContainer receipt = ShineClient.signReceipt("bob", bob.key(), "alice", pair.outgoing().baseKey(), readAt);

    bobPhone.sendReadReceipt(receipt).await();

    JsonNode event = awaitEvent(laptopEvents, "DmReadByMe");
    assertThat(event.at("/payload/baseKey").asText()).isEqualTo(pair.outgoing().baseKey());
    assertThat(event.at("/payload/readAtMs").asLong()).isEqualTo(readAt);
    assertThat(event.get("payload").size()).isEqualTo(2);
    // a later message reaches both of bob's sessions; by then a DmReadByMe for the phone would have come too
    send(aliceSession, alice, "bob", System.currentTimeMillis(), "barrier");
    Eventually.until("the phone gets the next message", 5_000, () -> ops(phoneEvents).contains("IncomingDirectMessage")
        && ops(phoneEvents).lastIndexOf("IncomingDirectMessage") > 0);
    assertThat(ops(phoneEvents)).doesNotContain("DmReadByMe");
    bobPhone.sendReadReceipt(receipt).await();
    assertThat(bobLaptop.request("GetConversations", ShineClient.object()).await()
        .at("/conversations/0/unread").asLong()).isEqualTo(1);
    assertThat(ops(laptopEvents).stream().filter("DmReadByMe"::equals).count())
        .as("a repeated receipt is not pushed again").isEqualTo(1);
  }

  @Test
  @DisplayName("a pair forwarded to the sender's second server reaches the sender's sessions there, and its ticks follow")
  void outgoingFromSibling() {
    TestServer[] servers = world.servers("s1", "s2");
    TestServer s1 = servers[0];
    TestServer s2 = servers[1];
    TestUser alice = world.user("alice", TestWorld.routes(s1, s2), s1, s2);
    world.user("bob", TestWorld.routes(s1), s1, s2);
    ShineClient aliceOnS1 = world.session(alice, s1);
    ShineClient aliceOnS2 = world.session(alice, s2);
    List<JsonNode> onS2 = events(aliceOnS2);

    SignedPair pair = send(aliceOnS1, alice, "bob", System.currentTimeMillis(), "via s1");

    JsonNode event = awaitEvent(onS2, "OutgoingDirectMessage");
    assertThat(event.at("/payload/messageKey").asText()).isEqualTo(pair.outgoing().messageKey());
    assertThat(event.at("/payload/deliveryState").asText()).isIn("accepted", "delivered");
    Eventually.until("s2's session learns the delivered state", 10_000, () -> onS2.stream().anyMatch(e ->
        e.at("/payload/baseKey").asText().equals(pair.outgoing().baseKey())
            && e.at("/payload/deliveryState").asText().equals("delivered")));
  }

  private static SignedPair send(ShineClient session, TestUser from, String to, long createdAtMs, String text) {
    SignedPair pair = ShineClient.signPair(from.login(), from.key(), to, createdAtMs, ShineClient.randomNonce(), 0,
        text.getBytes(StandardCharsets.UTF_8));
    session.sendPair(pair).await();
    return pair;
  }

  private static List<JsonNode> events(ShineClient session) {
    List<JsonNode> events = new CopyOnWriteArrayList<>();
    session.onEvent(events::add);
    return events;
  }

  private static List<String> ops(List<JsonNode> events) {
    return events.stream().map(e -> e.get("op").asText()).toList();
  }

  private static JsonNode awaitEvent(List<JsonNode> events, String op) {
    Eventually.until(op, 10_000, () -> ops(events).contains(op));
    return events.stream().filter(e -> e.get("op").asText().equals(op)).findFirst().orElseThrow();
  }

  private static void assertRefused(ShineClient session, JsonNode payload, int status, String code) {
    assertThatThrownBy(() -> session.request("GetConversations", payload).await())
        .isInstanceOfSatisfying(ShineClientException.class, e -> {
          assertThat(e.status()).isEqualTo(status);
          assertThat(e.code()).isEqualTo(code);
        });
  }
}
