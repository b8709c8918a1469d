package org.shine.server.hub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.client.ShineClientException;
import org.shine.server.support.Eventually;
import org.shine.server.support.Sql;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/**
 * The hub entry of an event is written in the same transaction as the change that causes it (PROTOCOL §10): a
 * failure of either leaves neither, and a 200 means the entry is there for a poller, whatever happens to the
 * server next. Faults are injected into the test database (triggers on {@code hub_queue}, terminated backends).
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class HubTransactionIT {
  private static final String FAST = "{\"delivery\":{\"scheduleMs\":[0,300,600,900,1200],\"workerPeriodMs\":50,"
      + "\"callTimeoutMs\":1000,\"leaseMs\":500},\"hub\":{\"maxWaitS\":5}}";
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
  @DisplayName("a hub entry that cannot be written fails the send: no copy, delivery row, outbox item or entry;"
      + " the same bytes later store them all")
  void failingEntryStoresNothing() throws Exception {
    // GIVEN bob polls the hub of the server he shares with alice, and his hub entries are refused for now
    TestServer server = world.server("s1");
    HubHttp hub = new HubHttp(server);
    TestUser alice = user("alice", server);
    TestUser bob = user("bob", server);
    String access = hub.tokens(bob).get("accessToken").asText();
    Sql sql = world.sql(server);
    sql.pool().query("CREATE FUNCTION refuse_hub() RETURNS trigger LANGUAGE plpgsql AS"
        + " $$ BEGIN RAISE EXCEPTION 'hub entry refused by the test'; END $$").execute().await();
    sql.pool().query("CREATE TRIGGER refuse_hub BEFORE INSERT ON hub_queue FOR EACH ROW WHEN (NEW.login = '"
        + bob.login() + "') EXECUTE FUNCTION refuse_hub()").execute().await();
    ShineClient session = world.session(alice, server);
    SignedPair pair = pair(alice, bob, "all or nothing");

    // WHEN alice sends to bob
    assertThatThrownBy(() -> session.sendPair(pair).await())
        .isInstanceOfSatisfying(ShineClientException.class, e -> assertThat(e.status()).isEqualTo(500));

    // THEN nothing of it is stored, and the session goes on
    String baseKey = pair.outgoing().baseKey();
    assertThat(sql.count("SELECT count(*) FROM dm_message WHERE base_key = $1", baseKey)).isZero();
    assertThat(sql.count("SELECT count(*) FROM dm_delivery WHERE base_key = $1", baseKey)).isZero();
    assertThat(sql.count("SELECT count(*) FROM sync_queue WHERE item_key = $1", baseKey)).isZero();
    assertThat(sql.count("SELECT count(*) FROM hub_queue WHERE login = $1", bob.login())).isZero();

    // AND once entries are accepted again, the same bytes store the copies, the row, the items and the entry
    sql.pool().query("DROP TRIGGER refuse_hub ON hub_queue").execute().await();
    assertThat(session.sendPair(pair).await().get("deliveryState").asText()).isEqualTo("delivered");
    assertThat(sql.count("SELECT count(*) FROM dm_message WHERE base_key = $1", baseKey)).isEqualTo(2);
    assertThat(sql.count("SELECT count(*) FROM dm_delivery WHERE base_key = $1", baseKey)).isEqualTo(1);
    assertThat(sql.count("SELECT count(*) FROM sync_queue WHERE item_key = $1", baseKey)).isEqualTo(2);
    JsonNode event = HubHttp.ok(hub.get("/messages?waitS=0", access));
    assertThat(event.get("op").asText()).isEqualTo("IncomingDirectMessage");
    assertThat(event.at("/payload/baseKey").asText()).isEqualTo(baseKey);
  }

  @Test
  @DisplayName("a state change whose hub entry cannot be written is not recorded: the row stays accepted and a"
      + " later attempt records both")
  void failingEntryKeepsTheStateUnrecorded() throws Exception {
    // GIVEN alice polls the hub, bob's server refuses the first attempt, and alice's hub entries are refused
    StubPeer bobServer = world.stub();
    AtomicInteger calls = new AtomicInteger();
    bobServer.respond("ReceiveIncomingMessage", (op, p) -> calls.incrementAndGet() == 1
        ? new StubPeer.Error(503, "STORAGE_UNAVAILABLE", "not yet") : Json.MAPPER.createObjectNode());
    TestServer server = world.server("s1");
    HubHttp hub = new HubHttp(server);
    TestUser alice = user("alice", server);
    TestUser bob = world.user(TestWorld.unique("bob"), List.of(Map.entry(bobServer.serverLogin(), bobServer.url())),
        server);
    String access = hub.tokens(alice).get("accessToken").asText();
    Sql sql = world.sql(server);
    sql.pool().query("CREATE FUNCTION refuse_hub() RETURNS trigger LANGUAGE plpgsql AS"
        + " $$ BEGIN RAISE EXCEPTION 'hub entry refused by the test'; END $$").execute().await();
    sql.pool().query("CREATE TRIGGER refuse_hub BEFORE INSERT ON hub_queue FOR EACH ROW WHEN (NEW.login = '"
        + alice.login() + "') EXECUTE FUNCTION refuse_hub()").execute().await();
    SignedPair pair = pair(alice, bob, "delivered on a retry");

    // WHEN the first attempt fails and the retries reach bob's server while the entry is refused
    assertThat(world.session(alice, server).sendPair(pair).await().get("deliveryState").asText())
        .isEqualTo("accepted");
    Eventually.until("a retry reaches bob's server", 10_000, () -> calls.get() >= 3);

    // THEN no retry has recorded delivered without its entry
    assertThat(sql.state(pair)).isEqualTo("accepted");
    assertThat(sql.count("SELECT count(*) FROM hub_queue WHERE login = $1", alice.login())).isZero();

    // AND once entries are accepted again, the next retry records the state and its entry together
    sql.pool().query("DROP TRIGGER refuse_hub ON hub_queue").execute().await();
    Eventually.until("the retry records delivered", 10_000, () -> "delivered".equals(sql.state(pair)));
    JsonNode event = HubHttp.ok(hub.get("/messages?waitS=0", access));
    assertThat(event.get("op").asText()).isEqualTo("DmDeliveryStateChanged");
    assertThat(event.at("/payload/deliveryState").asText()).isEqualTo("delivered");
  }

  @Test
  @DisplayName("a poller gets the event although no session was live and the server stopped right after the 200")
  void entryOutlivesTheServer() throws Exception {
    // GIVEN bob polls the hub and has no session; writing a hub entry takes its time
    TestServer server = world.server("s1");
    TestUser alice = user("alice", server);
    TestUser bob = user("bob", server);
    String access = new HubHttp(server).tokens(bob).get("accessToken").asText();
    Sql sql = world.sql(server);
    sql.pool().query("CREATE FUNCTION slow_hub() RETURNS trigger LANGUAGE plpgsql AS"
        + " $$ BEGIN PERFORM pg_sleep(0.3); RETURN NEW; END $$").execute().await();
    sql.pool().query("CREATE TRIGGER slow_hub BEFORE INSERT ON hub_queue FOR EACH ROW EXECUTE FUNCTION slow_hub()")
        .execute().await();
    SignedPair pair = pair(alice, bob, "still there after the crash");

    // WHEN alice's send is answered 200 and at once every database connection of the server is cut (whatever it
    // was still writing is rolled back) and the server stops
    ShineClient session = world.session(alice, server);
    assertThat(session.sendPair(pair).await().get("deliveryState").asText()).isEqualTo("delivered");
    sql.pool().query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database()"
        + " AND pid <> pg_backend_pid()").execute().recover(failure -> Future.succeededFuture()).await();
    session.close();
    server.close();

    // THEN a server started again on that database hands bob the event
    Pool after = world.database("s1").pool();
    world.onClose(() -> after.close().await());
    after.query("DROP TRIGGER slow_hub ON hub_queue").execute().await();
    TestServer again = world.server("s1");
    JsonNode event = HubHttp.ok(new HubHttp(again).get("/messages?waitS=5", access));
    assertThat(event.get("op").asText()).isEqualTo("IncomingDirectMessage");
    assertThat(event.at("/payload/baseKey").asText()).isEqualTo(pair.outgoing().baseKey());
  }

  @Test
  @DisplayName("a read receipt stored for the original sender who polls is queued for her with it")
  void receiptEntry() throws Exception {
    // GIVEN alice polls and bob, on the same server, has her message
    TestServer server = world.server("s1");
    HubHttp hub = new HubHttp(server);
    TestUser alice = user("alice", server);
    TestUser bob = user("bob", server);
    String access = hub.tokens(alice).get("accessToken").asText();
    SignedPair pair = pair(alice, bob, "read me");
    world.session(alice, server).sendPair(pair).await();

    // WHEN bob reads it
    long readAt = System.currentTimeMillis();
    world.session(bob, server).sendReadReceipt(ShineClient.signReceipt(bob.login(), bob.key(), alice.login(),
        pair.outgoing().baseKey(), readAt)).await();

    // THEN alice's hub queue holds the receipt
    JsonNode event = HubHttp.ok(hub.get("/messages?waitS=5", access));
    assertThat(event.get("op").asText()).isEqualTo("DmReadReceipt");
    assertThat(event.at("/payload/baseKey").asText()).isEqualTo(pair.outgoing().baseKey());
    assertThat(event.at("/payload/readerLogin").asText()).isEqualTo(bob.login());
    assertThat(event.at("/payload/readAtMs").asLong()).isEqualTo(readAt);
  }

  @Test
  @DisplayName("concurrent events of one poller are handed out once each, in increasing delivery ids; users who do"
      + " not poll get no entries")
  void concurrentEventsInOrder() throws Exception {
    // GIVEN bob polls, carol does not, and four senders each send both of them ten messages at once
    TestServer server = world.server("s1", "{\"hub\":{\"maxWaitS\":5},\"instances\":{\"delivery\":2}}");
    HubHttp hub = new HubHttp(server);
    TestUser bob = user("bob", server);
    TestUser carol = user("carol", server);
    String access = hub.tokens(bob).get("accessToken").asText();
    Set<String> sentToBob = new HashSet<>();
    List<Future<JsonNode>> sends = new ArrayList<>();
    for (int s = 0; s < 4; s++) {
      TestUser sender = user("sender", server);
      ShineClient session = world.session(sender, server);
      for (int i = 0; i < 10; i++) {
        SignedPair toBob = pair(sender, bob, "to bob " + i);
        sentToBob.add(toBob.outgoing().baseKey());
        sends.add(session.sendPair(toBob));
        sends.add(session.sendPair(pair(sender, carol, "to carol " + i)));
      }
    }
    Future.all(sends).await();

    // WHEN bob polls and ACKs until the queue is empty
    List<Long> ids = new ArrayList<>();
    Set<String> received = new HashSet<>();
    while (true) {
      HttpResponse<String> got = hub.get("/messages?waitS=0", access);
      if (got.statusCode() == 204) {
        break;
      }
      JsonNode event = HubHttp.ok(got);
      String id = got.headers().firstValue("X-Delivery-Id").orElseThrow();
      ids.add(Long.parseLong(id));
      assertThat(received.add(event.at("/payload/baseKey").asText())).as("handed out once").isTrue();
      assertThat(hub.post("/ack/" + id, access, "").statusCode()).isEqualTo(200);
    }

    // THEN every message reached him once, in increasing ids, and carol has no queue at all
    assertThat(received).isEqualTo(sentToBob);
    assertThat(ids).isSorted().doesNotHaveDuplicates();
    Sql sql = world.sql(server);
    assertThat(sql.count("SELECT count(*) FROM hub_queue WHERE login = $1", carol.login())).isZero();
  }

  private TestUser user(String prefix, TestServer server) {
    return world.user(TestWorld.unique(prefix), server);
  }

  private static SignedPair pair(TestUser from, TestUser to, String text) {
    return ShineClient.signPair(from.login(), from.key(), to.login(), System.currentTimeMillis(),
        ShineClient.randomNonce(), 0, text.getBytes(StandardCharsets.UTF_8));
  }
}
