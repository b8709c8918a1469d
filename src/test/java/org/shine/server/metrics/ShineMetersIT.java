package org.shine.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.hub.HubHttp;
import org.shine.server.support.Eventually;
import org.shine.server.support.MutableClock;
import org.shine.server.support.Scrape;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/**
 * The {@code shine_*} meters of PROTOCOL §12, names and labels exactly, moved by real sends, deliveries, failures,
 * sync lag and hub polls across real servers: s1 (alice) with its configured peer s2 (bob), s9 a server that is
 * down (nothing listens on its port; carol's only route), and s3 on a clock the test moves, whose retry timer never
 * runs, so its accepted row stays put for the sampled gauges.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class ShineMetersIT {
  private static final String FAST = "{\"delivery\":{\"scheduleMs\":[0,100,200,300,400],\"workerPeriodMs\":50,"
      + "\"callTimeoutMs\":5000},\"metrics\":{\"gaugePeriodMs\":50}}";
  /** s3 stands alone (no peers), its retry worker still. */
  private static final String STILL = "{\"delivery\":{\"workerPeriodMs\":3600000,\"callTimeoutMs\":5000},"
      + "\"metrics\":{\"gaugePeriodMs\":50},\"peers\":[]}";
  private static final MutableClock CLOCK = MutableClock.now();
  private static Vertx vertx;
  private static TestWorld world;
  private static TestServer s1;
  private static TestServer s2;
  private static TestServer s3;
  private static String deadUrl;
  private static String deadServer;
  private static TestUser alice;
  private static TestUser bob;
  private static TestUser frank;

  @BeforeAll
  static void startServers() {
    vertx = Vertx.vertx();
    world = TestWorld.on(vertx).config(FAST).sites("s1", "s2");
    Map.Entry<String, String> dead = TestWorld.deadRoute();
    deadServer = dead.getKey();
    deadUrl = dead.getValue();
    s2 = world.server("s2");
    s1 = world.server("s1");
    s3 = world.clock(CLOCK).server("s3", STILL);
    alice = world.user("alice", TestWorld.routes(s1), s1, s2);
    bob = world.user("bob", TestWorld.routes(s2), s2, s1);
    world.user("carol", List.of(dead), s1, s3);
    frank = world.user("frank", List.of(Map.entry("s3", s3.url()), dead), s3);
    world.user("grace", TestWorld.routes(s1, s2), s1, s2);
  }

  @AfterAll
  static void stopServers() {
    world.close();
    vertx.close().await();
  }

  @Test
  @DisplayName("a delivered send moves shine_sends_total, the attempt, the transition, the peer call and shine_peer_up")
  void deliveredSend() {
    ShineClient session = world.session(alice, s1);
    Scrape before = Scrape.of(s1);

    JsonNode answer = session.sendText("alice", alice.key(), "bob", "hi bob").await();

    assertThat(answer.path("deliveryState").asText()).isEqualTo("delivered");
    Scrape after = Scrape.of(s1);
    assertThat(delta(before, after, "shine_sends_total", "outcome", "delivered")).isEqualTo(1);
    assertThat(delta(before, after, "shine_delivery_attempts_total", "attempt", "1", "outcome", "delivered"))
        .isEqualTo(1);
    assertThat(delta(before, after, "shine_delivery_transitions_total", "state", "delivered")).isEqualTo(1);
    assertThat(delta(before, after, "shine_peer_calls_seconds_count", "op", "ReceiveIncomingMessage",
        "outcome", "ok", "peer", "s2")).isEqualTo(1);
    assertThat(after.text()).contains("shine_peer_calls_seconds_bucket{");
    assertThat(after.value("shine_peer_up", "peer", "s2")).isEqualTo(1);
    assertThat(after.value("shine_peer_dials_total", "peer", "s2", "outcome", "opened")).isGreaterThanOrEqualTo(1);
    assertThat(after.value("shine_ws_sessions", "kind", "client")).isGreaterThanOrEqualTo(1);
    // s1 holds a server session on s2 (its configured peer), logged in as a server
    Eventually.until("s2 counts s1's server session", 10_000,
        () -> Scrape.of(s2).value("shine_ws_sessions", "kind", "server") >= 1);
    session.close().await();
  }

  @Test
  @DisplayName("a send to a server that is down counts not_delivered attempts 1 to 5, one failed transition, peer_up 0")
  void failedDelivery() {
    ShineClient session = world.session(alice, s1);
    Scrape before = Scrape.of(s1);

    JsonNode answer = session.sendText("alice", alice.key(), "carol", "are you there").await();

    assertThat(answer.path("deliveryState").asText()).isEqualTo("accepted");
    Eventually.until("the delivery fails after its fifth attempt", 30_000,
        () -> delta(before, Scrape.of(s1), "shine_delivery_transitions_total", "state", "failed") == 1);
    Scrape after = Scrape.of(s1);
    assertThat(delta(before, after, "shine_sends_total", "outcome", "accepted")).isEqualTo(1);
    for (int attempt = 1; attempt <= 5; attempt++) {
      assertThat(delta(before, after, "shine_delivery_attempts_total", "attempt", Integer.toString(attempt),
          "outcome", "not_delivered")).as("attempt " + attempt).isEqualTo(1);
    }
    assertThat(after.value("shine_peer_up", "peer", deadServer)).isZero();
    assertThat(after.value("shine_peer_dials_total", "peer", deadServer, "outcome", "failed"))
        .as("the reconnect loop's tries").isGreaterThanOrEqualTo(1);
    assertThat(after.count("shine_peer_dials_total", "peer", deadServer, "outcome", "opened")).isZero();
    assertThat(delta(before, after, "shine_peer_calls_seconds_count", "op", "ReceiveIncomingMessage",
        "outcome", "unavailable", "peer", deadServer)).isGreaterThanOrEqualTo(5);
    session.close().await();
  }

  @Test
  @DisplayName("a refused send counts as refused and stores nothing")
  void refusedSend() {
    ShineClient session = world.session(alice, s1);
    Scrape before = Scrape.of(s1);

    Throwable refused = org.assertj.core.api.Assertions.catchThrowable(() -> session.request("SendMessagePair",
        Json.MAPPER.createObjectNode().put("incomingBlobB64", "AAAA").put("outgoingBlobB64", "AAAA")).await());

    assertThat(refused).isNotNull();
    assertThat(delta(before, Scrape.of(s1), "shine_sends_total", "outcome", "refused")).isEqualTo(1);
    session.close().await();
  }

  @Test
  @DisplayName("sampled gauges: an accepted row, due once its next point passes, and the outbox owed to a sibling")
  void sampledGauges() {
    ShineClient session = world.session(frank, s3);
    long acceptedBefore = (long) Scrape.of(s3).value("shine_delivery_accepted");

    session.sendPair(ShineClient.signPair("frank", frank.key(), "carol", CLOCK.millis(), ShineClient.randomNonce(),
        0, "hello carol".getBytes(StandardCharsets.UTF_8))).await();

    Eventually.until("the accepted row is counted", 10_000,
        () -> Scrape.of(s3).value("shine_delivery_accepted") == acceptedBefore + 1);
    // stored due at once for its first attempt; the attempt's result moves it to the 30 s point (a sample taken in
    // between shows it due)
    Eventually.until("the row waits for its 30 s point", 10_000,
        () -> Scrape.of(s3).value("shine_delivery_due") == 0);
    // frank's other server s9 is down: his sent pair waits in s3's outbox for it
    Eventually.until("the unsynced item is owed to s9", 10_000,
        () -> Scrape.of(s3).count("shine_sync_lag_items", "sibling", deadServer) >= 1);

    CLOCK.advance(Duration.ofSeconds(31));

    Eventually.until("the row is due once its 30 s point has passed", 10_000,
        () -> Scrape.of(s3).value("shine_delivery_due") == acceptedBefore + 1);
    session.close().await();
  }

  @Test
  @DisplayName("shine_sync_lag_items names every sibling, at 0 while nothing is owed to it")
  void syncLagOfEverySibling() {
    // grace is served by s1 and s2 and has written nothing: s2 is s1's sibling and is owed nothing
    Eventually.until("s1 reports its sibling s2 at 0", 10_000,
        () -> Scrape.of(s1).text().contains("shine_sync_lag_items{sibling=\"s2\"} 0.0"));
  }

  @Test
  @DisplayName("shine_hub_queue_depth counts the events a polling user has not acknowledged")
  void hubQueueDepth() throws Exception {
    HubHttp hub = new HubHttp(s2);
    String access = hub.tokens(bob).get("accessToken").asText();
    double before = Scrape.of(s2).value("shine_hub_queue_depth");
    ShineClient session = world.session(alice, s1);

    session.sendText("alice", alice.key(), "bob", "for the hub").await();

    Eventually.until("the event is queued", 10_000, () -> Scrape.of(s2).value("shine_hub_queue_depth") == before + 1);
    HttpResponse<String> polled = hub.get("/messages?waitS=0", access);
    assertThat(polled.statusCode()).isEqualTo(200);
    String deliveryId = polled.headers().firstValue("X-Delivery-Id").orElseThrow();
    assertThat(hub.post("/ack/" + deliveryId, access, "").statusCode()).isEqualTo(200);
    Eventually.until("the acknowledged event leaves the count", 10_000,
        () -> Scrape.of(s2).value("shine_hub_queue_depth") == before);
    session.close().await();
  }

  private static double delta(Scrape before, Scrape after, String name, String... labels) {
    return after.count(name, labels) - before.count(name, labels);
  }
}
