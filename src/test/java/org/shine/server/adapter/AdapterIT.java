package org.shine.server.adapter;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.net.NetServer;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.shine.server.client.ContainerVerifier;
import org.shine.server.client.ShineClient;
import org.shine.server.support.Eventually;
import org.shine.server.support.TestDatabase;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/** The reference adapter (seed 004, both phases) against a real server's hub, with compressed time. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class AdapterIT {
  private static final String HUB = "{\"hub\":{\"visibilityTimeoutS\":1,\"maxWaitS\":1,\"accessTtlS\":2}}";
  private final List<HubAdapter> adapters = new ArrayList<>();
  private TestWorld world;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx);
  }

  @AfterEach
  void close() throws Exception {
    for (HubAdapter adapter : adapters) {
      adapter.stop();
    }
    world.close();
  }

  @Test
  @DisplayName("events arrive in order, are committed to the inbox, ACKed, processed once; access tokens refresh")
  void receivesInOrder(Vertx vertx, @TempDir Path dir) throws Exception {
    TestServer server = world.server("s1", HUB);
    TestUser alice = world.user("alice", server);
    TestUser bob = world.user("bob", server);
    List<String> seen = new CopyOnWriteArrayList<>();
    Inbox inbox = Inbox.open(dir.resolve("inbox.db").toString());
    start(server, bob, inbox, event -> seen.add(event.at("/payload/baseKey").asText()), 1, List.of(100L));

    ShineClient session = alice.session(vertx, server);
    List<String> sent = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      sent.add(session.sendText("alice", alice.key(), "bob", "in order " + i).await().get("baseKey").asText());
      if (i == 2) {
        // the rest come after the adapter's first access token has run out and it took a new pair
        Eventually.until("the adapter refreshed its tokens", 15_000, () -> world.sql(server).count(
            "SELECT count(*) FROM hub_token WHERE kind = 'access'") >= 2);
      }
    }

    Eventually.until("all five processed", 15_000, () -> seen.size() >= 5);
    assertThat(seen).containsExactlyElementsOf(sent);
    // the inbox marks a row done after its handler returns
    Eventually.until("all five done in the inbox", 5_000, () -> allDone(inbox, 5));
  }

  @Test
  @DisplayName("a crash between commit and ACK: the redelivered event is stored once and processed once")
  void crashBetweenCommitAndAck(Vertx vertx, @TempDir Path dir) throws Exception {
    TestServer server = world.server("s1", HUB);
    TestUser alice = world.user("alice", server);
    TestUser bob = world.user("bob", server);
    AtomicInteger handled = new AtomicInteger();
    AtomicBoolean crashed = new AtomicBoolean();
    Inbox inbox = Inbox.open(dir.resolve("inbox.db").toString());
    HubAdapter adapter = new HubAdapter(settings(server, bob, 1, List.of(100L)), inbox,
        event -> handled.incrementAndGet(), eventKey -> crashed.compareAndSet(false, true));
    adapter.start();
    adapters.add(adapter);

    alice.session(vertx, server).sendText("alice", alice.key(), "bob", "commit, then crash").await();

    Eventually.until("processed", 15_000, () -> handled.get() >= 1);
    // the event comes again after its visibility timeout, is found in the inbox and ACKed
    Eventually.until("the hub has its ACK", 15_000,
        () -> count(server, "SELECT count(*) FROM hub_queue WHERE NOT acked") == 0);
    Eventually.until("the inbox row is done", 5_000, () -> allDone(inbox, 1));
    assertThat(crashed.get()).isTrue();
    assertThat(handled.get()).isEqualTo(1);
    assertThat(inbox.all()).hasSize(1);
    // the hub got its ACK in the end: nothing is handed out again
    assertThat(count(server, "SELECT count(*) FROM hub_queue WHERE NOT acked")).isZero();
  }

  @Test
  @DisplayName("an ACK that fails ends the cycle; after the restart the event comes again and is stored once")
  void ackErrorEndsTheCycle(Vertx vertx, @TempDir Path dir) throws Exception {
    TestServer[] server = {world.server("s1", HUB)};
    TestUser alice = world.user("alice", server[0]);
    TestUser bob = world.user("bob", server[0]);
    AtomicInteger handled = new AtomicInteger();
    AtomicBoolean serverStopped = new AtomicBoolean();
    Inbox inbox = Inbox.open(dir.resolve("inbox.db").toString());
    // GIVEN the server goes away after the inbox commit and before the ACK; Phase 2 cannot read alice's card to
    // verify the event until the server is back, so it retries on a schedule that outlasts the restart
    HubAdapter adapter = new HubAdapter(settings(server[0], bob, 1, List.of(500L, 1_000L, 2_000L, 4_000L, 8_000L,
        16_000L)), inbox,
        event -> handled.incrementAndGet(), eventKey -> {
          if (serverStopped.compareAndSet(false, true)) {
            server[0].close();
          }
          return false;
        });
    adapter.start();
    adapters.add(adapter);
    alice.session(vertx, server[0]).sendText("alice", alice.key(), "bob", "ack me if you can").await();
    Eventually.until("the server is stopped at the ACK", 10_000, serverStopped::get);

    // WHEN it comes back
    server[0] = world.server("s1");

    // THEN the unacknowledged event is handed out again, stored once, processed once, and ACKed
    Eventually.until("the hub has its ACK", 30_000,
        () -> count(server[0], "SELECT count(*) FROM hub_queue WHERE NOT acked") == 0);
    assertThat(inbox.all()).hasSize(1);
    Eventually.until("the inbox row is done", 20_000, () -> allDone(inbox, 1));
    assertThat(handled.get()).isEqualTo(1);
  }

  @Test
  @DisplayName("a failing handler is retried at the delays, then dead; retry-dead brings it back")
  void retriesThenDead(Vertx vertx, @TempDir Path dir) throws Exception {
    TestServer server = world.server("s1", HUB);
    TestUser alice = world.user("alice", server);
    TestUser bob = world.user("bob", server);
    AtomicBoolean healthy = new AtomicBoolean(false);
    List<Long> attemptsAt = new CopyOnWriteArrayList<>();
    Inbox inbox = Inbox.open(dir.resolve("inbox.db").toString());
    start(server, bob, inbox, event -> {
      attemptsAt.add(System.currentTimeMillis());
      if (!healthy.get()) {
        throw new IllegalStateException("handler down");
      }
    }, 1, List.of(200L, 400L));

    alice.session(vertx, server).sendText("alice", alice.key(), "bob", "hard to handle").await();

    Eventually.until("dead after 3 attempts", 15_000, () -> {
      try {
        return inbox.dead().size() == 1;
      } catch (Exception e) {
        return false;
      }
    });
    assertThat(attemptsAt).hasSize(3);
    assertThat(attemptsAt.get(1) - attemptsAt.get(0)).isGreaterThanOrEqualTo(170);
    assertThat(attemptsAt.get(2) - attemptsAt.get(1)).isGreaterThanOrEqualTo(350);
    assertThat(inbox.dead().get(0).lastError()).contains("handler down");

    healthy.set(true);
    assertThat(inbox.retryDead(System.currentTimeMillis())).isEqualTo(1);
    Eventually.until("processed after retry-dead", 10_000, () -> {
      try {
        return "done".equals(inbox.all().get(0).status());
      } catch (Exception e) {
        return false;
      }
    });
    assertThat(attemptsAt).hasSize(4);
  }

  @Test
  @DisplayName("a crash mid-handler leaves a lease that expires, and the row is processed again")
  void crashMidHandler(@TempDir Path dir) throws Exception {
    Inbox inbox = Inbox.open(dir.resolve("inbox.db").toString());
    inbox.store("e1", "1", "{\"op\":\"x\",\"eventKey\":\"e1\"}", System.currentTimeMillis());
    // a processor claims it and dies before finishing
    assertThat(inbox.claimReady(System.currentTimeMillis(), 300, 10)).hasSize(1);
    List<String> handled = new CopyOnWriteArrayList<>();
    // an event without a container: nothing to verify, no card is read
    InboxProcessor survivor = new InboxProcessor(inbox, event -> handled.add(event.get("eventKey").asText()),
        ContainerVerifier.inline("bob", login -> Future.failedFuture("no card is read")), EventBodies.NONE,
        List.of(100L), 300);

    assertThat(survivor.runOnce()).isZero();
    Eventually.until("the lease runs out and the row is taken again", 5_000, () -> runOnce(survivor) == 1);

    assertThat(handled).containsExactly("e1");
    assertThat(inbox.all().get(0).attempts()).isEqualTo(2);
    assertThat(inbox.all().get(0).status()).isEqualTo("done");
    Inbox.Counts counts = inbox.counts(System.currentTimeMillis());
    assertThat(counts.done()).isEqualTo(1);
    assertThat(counts.pending()).isZero();
    assertThat(counts.oldestPendingAgeMs()).isZero();
  }

  @Test
  @DisplayName("Phase 1 paths: short polls (204), a lost server ends the cycle and the supervisor resumes")
  void shortPollAndNetworkLoss(Vertx vertx, @TempDir Path dir) throws Exception {
    TestServer server = world.server("s1", HUB);
    TestUser alice = world.user("alice", server);
    TestUser bob = world.user("bob", server);
    List<String> seen = new CopyOnWriteArrayList<>();
    Inbox inbox = Inbox.open(dir.resolve("inbox.db").toString());
    HubAdapter adapter = start(server, bob, inbox, event -> seen.add(event.get("eventKey").asText()), 0,
        List.of(100L));
    alice.session(vertx, server).sendText("alice", alice.key(), "bob", "before").await();
    Eventually.until("first event", 10_000, () -> seen.size() == 1);

    server.close();
    // while it is gone, its port drops every connection: the adapter's cycles end on the network error and the
    // supervisor starts new ones
    AtomicInteger tries = new AtomicInteger();
    NetServer gone = vertx.createNetServer().connectHandler(socket -> {
      tries.incrementAndGet();
      socket.close();
    });
    gone.listen(server.port(), "127.0.0.1").await();
    Eventually.until("two cycles ended on the lost server", 15_000, () -> tries.get() >= 2);
    gone.close().await();
    TestServer back = world.server("s1");
    alice.session(vertx, back).sendText("alice", alice.key(), "bob", "after").await();

    Eventually.until("the event sent after the restart", 40_000, () -> seen.size() == 2);
    assertThat(adapter.stoppedForGood()).isFalse();
  }

  @Test
  @DisplayName("the inbox also lives in PostgreSQL through a JDBC URL, with the same once-only insert")
  void postgresInbox(Vertx vertx) throws Exception {
    TestDatabase db = world.database();
    Inbox inbox = Inbox.open("jdbc:postgresql://" + db.config().host() + ":" + db.config().port() + "/"
        + db.config().database() + "?user=" + db.config().user()
        + (db.config().password().isEmpty() ? "" : "&password=" + db.config().password()));

    assertThat(inbox.store("k1", "1", "{}", 1)).isTrue();
    assertThat(inbox.store("k1", "2", "{}", 2)).isFalse();
    assertThat(inbox.claimReady(System.currentTimeMillis(), 1000, 10)).hasSize(1);
    assertThat(inbox.all()).hasSize(1);
  }

  @Test
  @DisplayName("when the refresh token is rejected the adapter stops for good")
  void stopsWhenRefreshRejected(Vertx vertx, @TempDir Path dir) throws Exception {
    TestServer server = world.server("s1", "{\"hub\":{\"maxWaitS\":1,\"accessTtlS\":1,\"refreshTtlS\":1}}");
    TestUser bob = world.user("bob", server);
    HubAdapter adapter = start(server, bob, Inbox.open(dir.resolve("inbox.db").toString()), event -> { }, 1,
        List.of(100L));

    Eventually.until("the adapter stops", 15_000, adapter::stoppedForGood);
  }

  @Test
  @DisplayName("a refresh whose answer was lost is retried with the same old refresh token: the adapter goes on"
      + " with the same family, nothing revoked, no new login")
  void lostRefreshAnswer(Vertx vertx, @TempDir Path dir) throws Exception {
    TestServer server = world.server("s1", HUB);
    TestUser alice = world.user("alice", server);
    TestUser bob = world.user("bob", server);
    List<String> refreshTokens = new CopyOnWriteArrayList<>();
    int proxyPort = losingTheFirstRefreshAnswer(vertx, server, refreshTokens);
    List<String> seen = new CopyOnWriteArrayList<>();
    HubAdapter adapter = new HubAdapter(new HubAdapter.Settings("http://127.0.0.1:" + proxyPort, null, bob.login(),
        bob.key(), 1, List.of(100L), 2_000, 50, Duration.ZERO), Inbox.open(dir.resolve("inbox.db").toString()),
        event -> seen.add(event.get("eventKey").asText()));
    adapter.start();
    adapters.add(adapter);

    // GIVEN the access token expired, the refresh happened on the server and its answer never came back
    Eventually.until("the refresh is presented again", 15_000, () -> refreshTokens.size() >= 2);

    // WHEN an event comes after that
    alice.session(vertx, server).sendText("alice", alice.key(), "bob", "after the lost answer").await();

    // THEN the adapter took the same pair again and goes on with it
    Eventually.until("the event is processed", 15_000, () -> seen.size() == 1);
    assertThat(refreshTokens.get(1)).isEqualTo(refreshTokens.get(0));
    assertThat(adapter.stoppedForGood()).isFalse();
    assertThat(count(server, "SELECT count(*) FROM hub_token WHERE revoked")).isZero();
    assertThat(count(server, "SELECT count(DISTINCT family) FROM hub_token")).isEqualTo(1);
  }

  private HubAdapter start(TestServer server, TestUser user, Inbox inbox, EventHandler handler, long waitS,
      List<Long> delays) throws Exception {
    HubAdapter adapter = new HubAdapter(settings(server, user, waitS, delays), inbox, handler);
    adapter.start();
    adapters.add(adapter);
    return adapter;
  }

  private static HubAdapter.Settings settings(TestServer server, TestUser user, long waitS, List<Long> delays) {
    return new HubAdapter.Settings("http://127.0.0.1:" + server.port(), null, user.login(), user.key(), waitS,
        delays, 2_000, 50, Duration.ZERO);
  }

  private long count(TestServer server, String sql) {
    return world.sql(server).count(sql);
  }

  private static int runOnce(InboxProcessor processor) {
    try {
      return processor.runOnce();
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * A loopback proxy in front of {@code server}'s hub that forwards every request, but closes the connection
   * instead of passing on the answer to the first refresh: it took place on the server, and its answer is lost.
   * Records the refresh token of every refresh; answers its port.
   */
  private int losingTheFirstRefreshAnswer(Vertx vertx, TestServer server, List<String> refreshTokens) {
    HttpClientAgent client = vertx.createHttpClient();
    AtomicBoolean lost = new AtomicBoolean();
    HttpServer proxy = vertx.createHttpServer(new HttpServerOptions().setHttp2ClearTextEnabled(false))
        .requestHandler(request -> request.body().compose(body -> {
          boolean refresh = request.path().endsWith("/token/refresh");
          if (refresh) {
            refreshTokens.add(new JsonObject(body).getString("refreshToken"));
          }
          return client.request(request.method(), server.port(), "127.0.0.1", request.uri()).compose(forward -> {
            copy(request.headers(), forward.headers(), "Authorization", "content-type");
            return forward.send(body);
          }).compose(answer -> answer.body().map(answerBody -> {
            if (refresh && lost.compareAndSet(false, true)) {
              request.connection().close();
              return null;
            }
            HttpServerResponse response = request.response().setStatusCode(answer.statusCode());
            copy(answer.headers(), response.headers(), "content-type", "X-Delivery-Id");
            response.end(answerBody);
            return null;
          }));
        }).onFailure(failure -> request.connection().close()));
    proxy.listen(0, "127.0.0.1").await();
    world.keep(() -> {
      proxy.close().await();
      client.close().await();
    });
    return proxy.actualPort();
  }

  private static void copy(MultiMap from, MultiMap to, String... names) {
    for (String name : names) {
      if (from.contains(name)) {
        to.set(name, from.get(name));
      }
    }
  }


  private static boolean allDone(Inbox inbox, int count) {
    try {
      List<Inbox.Row> rows = inbox.all();
      return rows.size() == count && rows.stream().allMatch(row -> row.status().equals("done"));
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
