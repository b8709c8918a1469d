package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.client.ShineClientException;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.KeyFile;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.support.Scrape;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/**
 * The rate limits of PROTOCOL §13 on the ops other servers call, over real sockets against real servers: a flood of
 * {@code ReceiveIncomingMessage} from self-registered logins is refused with 429 {@code RATE_LIMITED} before any
 * signature is verified (the node's {@code shine_signature_verifications_total} counts exactly the calls let
 * through), per client address, per author and per recipient, and a peer server session is limited per peer.
 * Each flood is sent as fast as the connections take it; what is let through is bounded by the limit's burst plus
 * its rate over the time the flood took.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class OpLimitsIT {
  private static final String RECEIVE = "ReceiveIncomingMessage";
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
  @DisplayName("openOpsPerIpPerS 10: a flood of 300 badly signed ReceiveIncomingMessage from 50 self-registered"
      + " logins on one address gets 429 RATE_LIMITED for all but the burst and rate, and only those let through"
      + " are verified; another address is still served")
  void floodPerAddress() {
    TestServer s1 = world.server("s1", limits("\"openOpsPerIpPerS\":10"));
    TestUser bob = world.user("bob", s1);
    List<TestUser> spammers = spammers(s1, 50);
    double verifiedBefore = verifications(s1);

    Flood flood = flood(s1, "127.0.0.1", 300, i -> spam(spammers.get(i % spammers.size()), bob));

    assertThat(flood.count(429, ErrorCode.RATE_LIMITED)).isGreaterThan(0);
    assertThat(flood.messages(429)).allSatisfy(m -> assertThat(m).contains("limits.openOpsPerIpPerS"));
    long verified = flood.count(400, ErrorCode.BAD_SIGNATURE);
    assertThat(flood.count(429, ErrorCode.RATE_LIMITED) + verified).as(flood.toString()).isEqualTo(300);
    assertThat(verified).as("let through in %d ms", flood.elapsedMs()).isBetween(1L, flood.allowed(10));
    assertThat(verifications(s1) - verifiedBefore).as("signatures verified").isEqualTo(verified);
    // another address is not held back by the flood's
    TestUser alice = world.user("alice", s1);
    assertThat(receiveFrom("127.0.0.2", s1, alice.pairTo(bob, "hello").incoming()).path("messageKey").asText())
        .endsWith("|1");
  }

  @Test
  @DisplayName("openOpsPerLoginPerS 5: 100 open ReceiveIncomingMessage carrying one author's messages let through"
      + " only the burst and rate, whatever the address; another author is still served")
  void floodPerAuthor() {
    TestServer s1 = world.server("s1", limits("\"openOpsPerLoginPerS\":5"));
    TestUser bob = world.user("bob", s1);
    TestUser mallory = world.user("mallory", s1);
    double verifiedBefore = verifications(s1);

    Flood flood = flood(s1, "127.0.0.3", 100, i -> spam(mallory, bob));

    long verified = flood.count(400, ErrorCode.BAD_SIGNATURE);
    assertThat(flood.messages(429)).isNotEmpty()
        .allSatisfy(m -> assertThat(m).contains("limits.openOpsPerLoginPerS").contains("mallory"));
    assertThat(verified + flood.messages(429).size()).as(flood.toString()).isEqualTo(100);
    assertThat(verified).isBetween(1L, flood.allowed(5));
    assertThat(verifications(s1) - verifiedBefore).isEqualTo(verified);
    TestUser alice = world.user("alice", s1);
    assertThat(receiveFrom("127.0.0.3", s1, alice.pairTo(bob, "hi").incoming()).path("messageKey").asText())
        .endsWith("|1");
  }

  @Test
  @DisplayName("inboundPerRecipientPerS 5: copies for one recipient from any author and any session, a peer's"
      + " server session included, are let through at the burst and rate; another recipient is still served")
  void floodPerRecipient() {
    world.sites("s1", "s2");
    TestServer s1 = world.server("s1", limits("\"inboundPerRecipientPerS\":5"));
    TestServer s2 = world.server("s2");
    TestUser bob = world.user("bob", s1);
    TestUser dora = world.user("dora", s1);
    List<TestUser> spammers = spammers(s1, 20);

    Flood anonymous = flood(s1, "127.0.0.5", 60, i -> spam(spammers.get(i % spammers.size()), bob));
    assertThat(anonymous.messages(429)).isNotEmpty()
        .allSatisfy(m -> assertThat(m).contains("limits.inboundPerRecipientPerS").contains("bob"));
    assertThat(anonymous.count(400, ErrorCode.BAD_SIGNATURE)).isBetween(1L, anonymous.allowed(5));

    // the same from a peer's authenticated server session, to another recipient
    ShineClient peer = world.serverSession(s2, s1);
    Flood fromPeer = flood(List.of(peer), 60, i -> receive(spam(spammers.get(i % spammers.size()), dora)));
    assertThat(fromPeer.messages(429)).isNotEmpty()
        .allSatisfy(m -> assertThat(m).contains("limits.inboundPerRecipientPerS").contains("dora"));
    assertThat(fromPeer.count(400, ErrorCode.BAD_SIGNATURE)).isBetween(1L, fromPeer.allowed(5));

    TestUser carol = world.user("carol", s1);
    TestUser alice = world.user("alice", s1);
    assertThat(receiveFrom("127.0.0.6", s1, alice.pairTo(carol, "hi").incoming()).path("messageKey").asText())
        .endsWith("|1");
  }

  @Test
  @DisplayName("opsPerPeerPerS 10: every op of one peer's server session counts, beyond the burst and rate 429"
      + " RATE_LIMITED; the open-op limits do not apply to it, and another peer is still served")
  void perPeer() {
    world.sites("s1", "s2", "s3");
    TestServer s1 = world.server("s1", limits("\"opsPerPeerPerS\":10,\"openOpsPerIpPerS\":1,"
        + "\"openOpsPerLoginPerS\":1"));
    TestServer s2 = world.server("s2");
    TestServer s3 = world.server("s3");
    TestUser bob = world.user("bob", s1);
    TestUser mallory = world.user("mallory", s1);
    ShineClient fromS2 = world.serverSession(s2, s1);

    Flood flood = flood(List.of(fromS2), 100, i -> receive(spam(mallory, bob)));

    assertThat(flood.messages(429)).isNotEmpty()
        .allSatisfy(m -> assertThat(m).contains("limits.opsPerPeerPerS").contains("s2"));
    long served = flood.count(400, ErrorCode.BAD_SIGNATURE);
    assertThat(served).as("open-op limits of 1/s do not hold a peer to one call: %s", flood)
        .isGreaterThan(2).isLessThanOrEqualTo(flood.allowed(10));
    ShineClient fromS3 = world.serverSession(s3, s1);
    assertThat(fromS3.request("GetDmDeliveryStatus", ShineClient.object()
        .put("messageKey", "alice|bob|1|1|2")).await().path("known").asBoolean()).isFalse();
  }

  // ---- helpers ---------------------------------------------------------------------------------------------

  private static String limits(String fields) {
    return "{\"limits\":{" + fields + "}}";
  }

  private List<TestUser> spammers(TestServer server, int count) {
    List<TestUser> spammers = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      spammers.add(world.user(TestWorld.unique("spam"), server));
    }
    return spammers;
  }

  /** A copy of a new message from {@code from} to {@code to}, signed with a key that is not {@code from}'s. */
  private static DmContainer spam(TestUser from, TestUser to) {
    return ShineClient.signPair(from.login(), KeyFile.generate(from.login()), to.login(), System.currentTimeMillis(),
        ShineClient.randomNonce(), 0, "buy now".getBytes(StandardCharsets.UTF_8)).incoming();
  }

  private static Map.Entry<String, JsonNode> receive(DmContainer copy) {
    return Map.entry(RECEIVE, ShineClient.object().put("incomingBlobB64",
        Base64.getEncoder().encodeToString(copy.bytes())));
  }

  private JsonNode receiveFrom(String localAddress, TestServer server, DmContainer copy) {
    ShineClient client = world.keep(ShineClient.connectFrom(vertx, server.url(), localAddress).await());
    return client.request(RECEIVE, receive(copy).getValue()).await();
  }

  private static double verifications(TestServer server) {
    return Scrape.of(server).count("shine_signature_verifications_total", "op", "message");
  }

  /** {@code count} ReceiveIncomingMessage from {@code localAddress} on four connections, all sent at once. */
  private Flood flood(TestServer server, String localAddress, int count, IntFunction<DmContainer> copy) {
    List<ShineClient> clients = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      clients.add(world.keep(ShineClient.connectFrom(vertx, server.url(), localAddress).await()));
    }
    return flood(clients, count, i -> receive(copy.apply(i)));
  }

  private static Flood flood(List<ShineClient> clients, int count,
      IntFunction<Map.Entry<String, JsonNode>> request) {
    List<Map.Entry<String, JsonNode>> requests = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      requests.add(request.apply(i));
    }
    long start = System.nanoTime();
    List<Future<JsonNode>> answers = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      answers.add(clients.get(i % clients.size()).request(requests.get(i).getKey(), requests.get(i).getValue()));
    }
    Future.join(new ArrayList<>(answers)).otherwiseEmpty().await();
    long elapsedMs = (System.nanoTime() - start) / 1_000_000;
    return new Flood(answers, elapsedMs);
  }

  /** The answers to a flood and how long it took, from the first request sent to the last answer. */
  private record Flood(List<Future<JsonNode>> answers, long elapsedMs) {
    long count(int status, String code) {
      return answers.stream().filter(Future::failed).map(Future::cause)
          .filter(c -> c instanceof ShineClientException e && e.status() == status && e.code().equals(code)).count();
    }

    List<String> messages(int status) {
      return answers.stream().filter(Future::failed).map(Future::cause)
          .filter(c -> c instanceof ShineClientException e && e.status() == status).map(Throwable::getMessage)
          .toList();
    }

    /** What a limit of {@code perSecond} lets through in this time at most: its burst, then its rate. */
    long allowed(int perSecond) {
      return perSecond + (long) Math.ceil(perSecond * elapsedMs / 1000.0);
    }

    @Override
    public String toString() {
      Map<String, Integer> outcomes = new TreeMap<>();
      for (Future<JsonNode> answer : answers) {
        String key = answer.succeeded() ? "200" : answer.cause() instanceof ShineClientException e
            ? e.status() + " " + e.code() : String.valueOf(answer.cause());
        outcomes.merge(key, 1, Integer::sum);
      }
      return outcomes + " in " + elapsedMs + " ms";
    }
  }
}
