package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.config.AppConfig;
import org.shine.server.config.ConfigLoader;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.support.LogCapture;

/**
 * The limits of PROTOCOL §11 on the sessions of one gateway instance, on a clock the test moves: auth and idle
 * timeouts, pings, congestion, the in-flight bound, the connection budget and draining.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class SessionKeeperTest {
  private static final long AUTH_MS = 1_000;
  private static final long IDLE_MS = 9_000;
  private static final long SLOW_MS = 4_000;
  private static final int QUEUE_BYTES = 65_536;
  private final AtomicLong nanos = new AtomicLong(TimeUnit.SECONDS.toNanos(1_000));
  private final AppConfig config = ConfigLoader.parse("{\"limits\":{\"authTimeoutMs\":" + AUTH_MS
      + ",\"idleTimeoutMs\":" + IDLE_MS + ",\"slowReaderCloseMs\":" + SLOW_MS + ",\"writeQueueBytes\":" + QUEUE_BYTES
      + ",\"maxInFlightPerConnection\":2}}", Map.of());
  private final ShineMetrics metrics = ShineMetrics.forNode("k1", true);
  private final SessionRegistry registry = new SessionRegistry();
  private ConnectionBudget budget;
  private SessionKeeper keeper;
  private int nextPort = 40_000;

  @BeforeEach
  void setUp(Vertx vertx) {
    budget = new ConnectionBudget(1, 0);
    keeper = new SessionKeeper(vertx, config, budget, metrics, registry, nanos::get);
  }

  @Test
  @DisplayName("an anonymous session is closed 1008 when authTimeoutMs pass without a request; a request restarts"
      + " the wait and a request in flight holds it")
  void authTimeout() {
    FakeSocket client = new FakeSocket(nextPort++);
    Session session = keeper.open(client.socket);

    advance(AUTH_MS - 1);
    keeper.housekeeping();
    assertThat(client.closeCode).isNull();

    keeper.heardRequest(session);
    advance(AUTH_MS - 1);
    keeper.housekeeping();
    assertThat(client.closeCode).as("the request restarted the wait").isNull();

    assertThat(keeper.admit(session)).isNull();
    advance(AUTH_MS);
    keeper.housekeeping();
    assertThat(client.closeCode).as("a request is in flight").isNull();

    keeper.finished(session);
    keeper.housekeeping();
    assertThat(client.closeCode).isEqualTo(SessionKeeper.CLOSE_POLICY);
    assertThat(client.closeReason).isEqualTo("not logged in within " + AUTH_MS + " ms");
  }

  @Test
  @DisplayName("a logged-in session is pinged every third of idleTimeoutMs, kept open by a pong, and closed 1001"
      + " after idleTimeoutMs without a word")
  void pingsAndIdle() {
    FakeSocket client = new FakeSocket(nextPort++);
    Session session = keeper.open(client.socket);
    session.login = "alice";

    advance(IDLE_MS / 3 - 1);
    keeper.housekeeping();
    assertThat(client.pings).isZero();
    advance(1);
    keeper.housekeeping();
    assertThat(client.pings).isEqualTo(1);
    advance(IDLE_MS / 3);
    keeper.housekeeping();
    assertThat(client.pings).isEqualTo(2);

    keeper.heard(session);
    advance(IDLE_MS / 3);
    keeper.housekeeping();
    assertThat(client.pings).isEqualTo(3);
    assertThat(client.closeCode).as("the pong kept it open").isNull();

    advance(IDLE_MS - IDLE_MS / 3);
    keeper.housekeeping();
    assertThat(client.closeCode).isEqualTo(SessionKeeper.CLOSE_GOING_AWAY);
    assertThat(client.closeReason).isEqualTo("idle for " + IDLE_MS + " ms");
  }

  @Test
  @DisplayName("a write that fills the queue stops reading the session: events are dropped, no ping is sent, and"
      + " when it drains it is read again, or closed 1008 if it missed an event")
  void congestion() {
    try (LogCapture log = LogCapture.of(GatewayVerticle.class.getName(), Level.DEBUG)) {
      FakeSocket quiet = new FakeSocket(nextPort++);
      Session reader = keeper.open(quiet.socket);
      reader.login = "alice";
      quiet.queueFull = true;
      keeper.write(reader, "answer");
      assertThat(quiet.texts).containsExactly("answer");
      assertThat(quiet.paused).as("no longer read").isTrue();
      assertThat(log.text()).contains("session congested: no longer read [session: alice]");

      advance(IDLE_MS / 3);
      keeper.housekeeping();
      assertThat(quiet.pings).as("no ping on a congested session").isZero();

      quiet.queueFull = false;
      quiet.drain();
      assertThat(quiet.paused).as("read again").isFalse();
      assertThat(quiet.closeCode).isNull();

      FakeSocket missing = new FakeSocket(nextPort++);
      Session slow = keeper.open(missing.socket);
      slow.login = "bob";
      missing.queueFull = true;
      keeper.write(slow, "answer");
      keeper.push(slow, "event 1");
      keeper.push(slow, "event 2");
      assertThat(missing.texts).containsExactly("answer");
      missing.queueFull = false;
      missing.drain();
      assertThat(missing.closeCode).isEqualTo(SessionKeeper.CLOSE_POLICY);
      assertThat(missing.closeReason).isEqualTo("slow reader: 2 events were dropped; reconnect and reload history");
      assertThat(log.text()).contains("session closed [session: bob, code: 1008]");
    }
  }

  @Test
  @DisplayName("a session that stays congested for slowReaderCloseMs is closed 1008")
  void slowReader() {
    FakeSocket client = new FakeSocket(nextPort++);
    Session session = keeper.open(client.socket);
    session.login = "alice";
    client.queueFull = true;
    keeper.write(session, "answer");

    advance(SLOW_MS - 1);
    keeper.housekeeping();
    assertThat(client.closeCode).isNull();
    advance(1);
    keeper.housekeeping();
    assertThat(client.closeCode).isEqualTo(SessionKeeper.CLOSE_POLICY);
    assertThat(client.closeReason).isEqualTo("slow reader: " + QUEUE_BYTES + " bytes unsent for " + SLOW_MS
        + " ms; reconnect and reload history");
  }

  @Test
  @DisplayName("past maxInFlightPerConnection a request is refused 429 TOO_MANY_IN_FLIGHT; a finished one makes room")
  void inFlightBound() {
    Session session = keeper.open(new FakeSocket(nextPort++).socket);
    assertThat(keeper.admit(session)).isNull();
    assertThat(keeper.admit(session)).isNull();

    ProtocolException third = keeper.admit(session);
    assertThat(third.status()).isEqualTo(429);
    assertThat(third.code()).isEqualTo(ErrorCode.TOO_MANY_IN_FLIGHT);
    assertThat(third.getMessage()).isEqualTo("more than 2 requests in flight on this connection");

    keeper.finished(session);
    assertThat(keeper.admit(session)).isNull();
  }

  @Test
  @DisplayName("a session counts as unauthenticated, moves to the client count and the registry once a request logs"
      + " it in, and leaves both when it closes")
  void sessionCounts() {
    PrometheusMeterRegistry meters = metrics.scrapeRegistry().orElseThrow();
    FakeSocket client = new FakeSocket(nextPort++);
    Session session = keeper.open(client.socket);
    assertThat(sessions(meters, "unauthenticated")).isEqualTo(1);

    keeper.admit(session);
    session.login = "alice";
    keeper.finished(session);
    assertThat(sessions(meters, "unauthenticated")).isZero();
    assertThat(sessions(meters, "client")).isEqualTo(1);
    assertThat(registry.sessionsOf("alice")).isEqualTo(1);

    client.closed();
    assertThat(sessions(meters, "client")).isZero();
    assertThat(registry.sessionsOf("alice")).isZero();
  }

  @Test
  @DisplayName("over the connection budget a connection's requests and upgrades get 503 until it closes; a budgeted"
      + " connection gives its place back once, on its WebSocket's close")
  void connectionBudget() {
    FakeSocket.Connection first = new FakeSocket.Connection(41_001);
    FakeSocket.Connection second = new FakeSocket.Connection(41_002);
    keeper.onConnection(first.connection);
    keeper.onConnection(second.connection);
    assertThat(budget.open()).isEqualTo(1);
    assertThat(keeper.refuses(second.connection.remoteAddress())).isTrue();
    assertThat(keeper.refuses(first.connection.remoteAddress())).isFalse();

    FakeSocket.Handshake refused = new FakeSocket.Handshake(41_002, "/ws");
    keeper.handshake(refused.handshake);
    assertThat(refused.rejected).isEqualTo(503);
    FakeSocket.Handshake elsewhere = new FakeSocket.Handshake(41_001, "/other");
    keeper.handshake(elsewhere.handshake);
    assertThat(elsewhere.rejected).isEqualTo(404);
    FakeSocket.Handshake upgrade = new FakeSocket.Handshake(41_001, "/ws");
    keeper.handshake(upgrade.handshake);
    assertThat(upgrade.accepted).isTrue();

    second.closedByPeer();
    assertThat(keeper.refuses(second.connection.remoteAddress())).isFalse();
    assertThat(budget.open()).as("a refused connection held no place").isEqualTo(1);

    FakeSocket socket = new FakeSocket(41_001);
    keeper.open(socket.socket);
    socket.closed();
    assertThat(budget.open()).isZero();
    first.closedByPeer();
    assertThat(budget.open()).as("given back once").isZero();
  }

  @Test
  @DisplayName("while draining a new WebSocket is closed 1001 and a request refused 503 OVERLOADED; the drain ends"
      + " when the last request in flight is done")
  void drain(Vertx vertx, VertxTestContext test) {
    vertx.runOnContext(v -> {
      Session busy = keeper.open(new FakeSocket(nextPort++).socket);
      keeper.admit(busy);
      Future<Void> drained = keeper.drain();
      test.verify(() -> {
        assertThat(keeper.draining()).isTrue();
        ProtocolException refused = keeper.admit(busy);
        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.code()).isEqualTo(ErrorCode.OVERLOADED);
        assertThat(refused.getMessage()).isEqualTo("server is shutting down; retry on another server or later");
        FakeSocket late = new FakeSocket(nextPort++);
        assertThat(keeper.open(late.socket)).isNull();
        assertThat(late.closeCode).isEqualTo(SessionKeeper.CLOSE_GOING_AWAY);
        assertThat(late.closeReason).isEqualTo("server is shutting down");
      });
      test.verify(() -> assertThat(drained.isComplete()).as("a request is still in flight").isFalse());
      keeper.finished(busy);
      drained.onComplete(test.succeedingThenComplete());
    });
  }

  @Test
  @DisplayName("the drain stops waiting after its limit, with a warning naming the requests still in flight")
  void drainLimit(Vertx vertx, VertxTestContext test) {
    LogCapture log = LogCapture.of(GatewayVerticle.class.getName(), Level.WARN);
    vertx.runOnContext(v -> {
      Session busy = keeper.open(new FakeSocket(nextPort++).socket);
      keeper.admit(busy);
      Future<Void> drained = keeper.drain();
      advance(SessionKeeper.DRAIN_LIMIT_MS + 1);
      drained.onComplete(test.succeeding(done -> test.verify(() -> {
        log.close();
        assertThat(log.text()).contains("drain limit reached with 1 requests in flight");
        test.completeNow();
      })));
    });
  }

  @Test
  @DisplayName("housekeeping runs every quarter of the shortest timeout; the HTTP backstop waits past the idle"
      + " timeout and the longest poll")
  void periods() {
    assertThat(keeper.housekeepingPeriodMs()).isEqualTo(AUTH_MS / 4);
    assertThat(keeper.backstopIdleMs()).isEqualTo(Math.max(IDLE_MS, config.hub().maxWaitS() * 1000 + 5_000)
        + AUTH_MS / 4);
  }

  private void advance(long ms) {
    nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
  }

  private static double sessions(PrometheusMeterRegistry meters, String kind) {
    return meters.get(ShineMetrics.WS_SESSIONS).tag(ShineMetrics.KIND, kind).gauge().value();
  }
}
