package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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
import org.shine.server.db.StorageHealth;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.support.Eventually;
import org.shine.server.support.MutableClock;
import org.shine.server.support.Sql;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestDatabase;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;
import org.slf4j.LoggerFactory;

/**
 * The server's own database refuses connections and its backends are terminated (PROTOCOL §12, docs/protocol.md
 * "Storage trouble"): only the test's database, never the shared PostgreSQL server.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class StorageOutageIT {
  private static final String RECEIVE = "ReceiveIncomingMessage";
  private static final long RETRY_GAP_MS = 2_000;
  /** The local bus timeout of a gateway request: a 503 must come well before it. */
  private static final long BUS_TIMEOUT_MS = 30_000;
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private TestWorld world;
  private final MutableClock clock = MutableClock.now();

  @BeforeEach
  void world(Vertx vertx) {
    world = TestWorld.on(vertx).clock(clock);
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("while the database refuses work: sends and reads answer 503 STORAGE_UNAVAILABLE at once, the session "
      + "survives, /ready is 503; when it returns: /ready 200, the retry timer attempts the due row, sends succeed")
  void outageAndRecovery() throws Exception {
    LogLines log = world.keep(LogLines.capture());
    List<Throwable> uncaught = new CopyOnWriteArrayList<>();
    StubPeer recipientServer = world.stub()
        .respond(RECEIVE, (op, p) -> new StubPeer.Error(503, ErrorCode.STORAGE_UNAVAILABLE, "down"));
    TestServer server = world.server("s1",
        "{\"delivery\":{\"scheduleMs\":[0," + RETRY_GAP_MS + ",4000,6000,8000],\"workerPeriodMs\":100,"
            + "\"callTimeoutMs\":500,\"leaseMs\":3000},\"sync\":{\"periodMs\":200}}");
    server.vertx().exceptionHandler(uncaught::add);
    TestDatabase database = world.database("s1");
    TestUser alice = world.user("alice", server);
    TestUser bob = world.user("bob", List.of(Map.entry(recipientServer.serverLogin(), recipientServer.url())),
        server);
    ShineClient session = world.session(alice, server);
    // GIVEN a message accepted before the outage: its first attempt found bob's server down, the next is due later
    SignedPair waiting = pair(alice, bob, "sent before the outage");
    assertThat(session.sendPair(waiting).await(10, TimeUnit.SECONDS).path("deliveryState").asText())
        .isEqualTo("accepted");
    assertThat(recipientServer.count(RECEIVE)).isEqualTo(1);
    assertThat(ready(server).statusCode()).isEqualTo(200);

    // WHEN the database refuses connections and its backends are cut
    log.clear();
    database.refuseConnections();

    // THEN a send and a read answer 503 STORAGE_UNAVAILABLE, each well before the bus timeout
    SignedPair during = pair(alice, bob, "sent during the outage");
    assertUnavailable(session.sendPair(during));
    assertUnavailable(session.request("GetDirectMessages", ShineClient.object().put("peer", bob.login())));
    for (int i = 0; i < 20; i++) {
      assertUnavailable(session.sendPair(pair(alice, bob, "refused " + i)));
    }
    // and the session survives, /ready says the database is down
    assertThat(session.closed()).isFalse();
    HttpResponse<String> down = ready(server);
    assertThat(down.statusCode()).isEqualTo(503);
    assertThat(Json.MAPPER.readTree(down.body()).path("checks").path("database").asText()).isEqualTo("DOWN");
    // the waiting row falls due while the database is away; the retry timer cannot claim it
    clock.advance(Duration.ofMillis(RETRY_GAP_MS + 500));
    Eventually.until("the retry and sync timers back off", 10_000, () -> log.warnings("backs off") >= 2);
    assertThat(recipientServer.count(RECEIVE)).isEqualTo(1);

    // WHEN the database accepts connections again
    database.allowConnections();

    // THEN /ready turns 200 by itself, the due row is attempted, and the same session sends again
    Eventually.until("/ready answers 200", 10_000, () -> ready(server).statusCode() == 200);
    Eventually.until("the retry timer attempts the due row", 10_000, () -> recipientServer.count(RECEIVE) >= 2);
    assertThat(recipientServer.requests().stream().filter(r -> RECEIVE.equals(r.op())).skip(1).findFirst()
        .orElseThrow().payload().path("incomingBlobB64").asText()).isEqualTo(b64(waiting.incoming().bytes()));
    JsonNode resent = session.sendPair(during).await(10, TimeUnit.SECONDS);
    assertThat(resent.path("baseKey").asText()).isEqualTo(during.incoming().baseKey());
    assertThat(session.sendPair(pair(alice, bob, "sent after the outage")).await(10, TimeUnit.SECONDS)
        .path("deliveryState").asText()).isIn("accepted", "delivered");

    // and the outage was logged once each way, with no ERROR line and no uncaught exception
    assertThat(log.lines(StorageHealth.class.getName(), Level.WARN)).hasSize(2);
    assertThat(log.lines(null, Level.ERROR)).isEmpty();
    assertThat(log.lines(GatewayVerticle.class.getName(), Level.WARN)).isEmpty();
    assertThat(uncaught).isEmpty();
    assertThat(count(world.sql(server), alice, during)).as("the resent pair is stored once").isEqualTo(1);
  }

  @Test
  @DisplayName("a write cut by the statement timeout answers 503 STORAGE_UNAVAILABLE, nothing half-stored, and the "
      + "same bytes sent again are stored once")
  void statementTimeout() throws Exception {
    TestServer server = world.server("s1", "{\"db\": {\"statementTimeoutMs\": 1000}}");
    assertThat(server.config().db().statementTimeoutMs()).isEqualTo(1_000);
    TestUser alice = world.user("alice", server);
    TestUser bob = world.user("bob", server);
    ShineClient session = world.session(alice, server);
    SignedPair pair = pair(alice, bob, "written while the table is locked");
    Sql sql = world.sql(server);

    // GIVEN the message table is locked against writes (reads go on)
    SqlConnection locker = sql.pool().getConnection().await(10, TimeUnit.SECONDS);
    Transaction lock = locker.begin().await(10, TimeUnit.SECONDS);
    locker.query("LOCK TABLE dm_message IN EXCLUSIVE MODE").execute().await(10, TimeUnit.SECONDS);

    // WHEN alice sends, THEN the write is cut after db.statementTimeoutMs: 503, and the session stays
    assertUnavailable(session.sendPair(pair));
    lock.rollback().await(10, TimeUnit.SECONDS);
    locker.close().await(10, TimeUnit.SECONDS);
    assertThat(count(sql, alice, pair)).as("nothing of the cut write is stored").isZero();

    // and the same bytes sent again are stored, once
    assertThat(session.sendPair(pair).await(10, TimeUnit.SECONDS).path("baseKey").asText())
        .isEqualTo(pair.incoming().baseKey());
    assertThat(session.sendPair(pair).await(10, TimeUnit.SECONDS).path("baseKey").asText())
        .isEqualTo(pair.incoming().baseKey());
    assertThat(count(sql, alice, pair)).isEqualTo(1);
  }

  private static long count(Sql sql, TestUser owner, SignedPair pair) {
    return sql.count("SELECT count(*) FROM dm_message WHERE owner = $1 AND base_key = $2", owner.login(),
        pair.outgoing().baseKey());
  }

  private static void assertUnavailable(Future<JsonNode> request) throws Exception {
    // answered well before the bus timeout, or await throws a TimeoutException
    request.otherwiseEmpty().await(BUS_TIMEOUT_MS / 3, TimeUnit.MILLISECONDS);
    assertThat(request.failed()).as("the request failed").isTrue();
    assertThat(request.cause()).isInstanceOfSatisfying(ShineClientException.class, e -> {
      assertThat(e.status()).as("%s", e.getMessage()).isEqualTo(503);
      assertThat(e.code()).isEqualTo(ErrorCode.STORAGE_UNAVAILABLE);
    });
  }

  private SignedPair pair(TestUser from, TestUser to, String text) {
    return ShineClient.signPair(from.login(), from.key(), to.login(), clock.millis(), ShineClient.randomNonce(), 0,
        text.getBytes(StandardCharsets.UTF_8));
  }

  private static String b64(byte[] bytes) {
    return java.util.Base64.getEncoder().encodeToString(bytes);
  }

  private static HttpResponse<String> ready(TestServer server) {
    try {
      return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/ready"))
          .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** The log lines of the whole JVM while a test runs (only this test's server runs then). */
  private static final class LogLines extends AppenderBase<ILoggingEvent> implements AutoCloseable {
    private final List<ILoggingEvent> events = new CopyOnWriteArrayList<>();

    static LogLines capture() {
      LogLines lines = new LogLines();
      lines.start();
      root().addAppender(lines);
      return lines;
    }

    @Override
    protected void append(ILoggingEvent event) {
      events.add(event);
    }

    void clear() {
      events.clear();
    }

    List<ILoggingEvent> lines(String logger, Level level) {
      return events.stream().filter(e -> e.getLevel() == level && (logger == null || logger.equals(e.getLoggerName())))
          .toList();
    }

    long warnings(String words) {
      return lines(null, Level.WARN).stream().filter(e -> e.getFormattedMessage().contains(words)).count();
    }

    @Override
    public void close() {
      root().detachAppender(this);
      stop();
    }

    private static Logger root() {
      return (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    }
  }
}
