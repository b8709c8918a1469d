package org.shine.server.support;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.shine.server.client.ShineClient;
import org.slf4j.LoggerFactory;

/**
 * One real server for a class of fuzz properties (started once, on its own database), with what every property
 * asserts: the answer to one hostile frame, and the row count of every table, so that a refused input can be shown
 * to have stored nothing.
 */
public final class FuzzServer implements AutoCloseable {
  /** Every table of the schema: a refused request may change none of their counts. */
  private static final List<String> TABLES = List.of("user_card", "user_access_servers_current", "known_server",
      "dm_message", "dm_delivery", "dm_signal", "sync_outbox", "sync_queue", "user_setting", "hub_challenge", "hub_token",
      "hub_subscriber", "hub_queue");
  private static final long WAIT_S = 20;
  public final MutableClock clock = MutableClock.now();
  public final Vertx vertx;
  public final TestServer server;
  private final TestWorld world;
  private final Pool sql;
  private final AtomicLong errorsLogged = new AtomicLong();
  private volatile String lastError = "";
  private final AppenderBase<ILoggingEvent> errorCounter = new AppenderBase<>() {
    @Override
    protected void append(ILoggingEvent event) {
      if (event.getLevel().isGreaterOrEqual(Level.ERROR)) {
        errorsLogged.incrementAndGet();
        lastError = event.getFormattedMessage() + (event.getThrowableProxy() == null ? ""
            : ": " + event.getThrowableProxy().getClassName() + ": " + event.getThrowableProxy().getMessage());
      }
    }
  };

  private FuzzServer(ObjectNode overrides) {
    errorCounter.start();
    rootLogger().addAppender(errorCounter);
    vertx = Vertx.vertx();
    world = TestWorld.on(vertx).clock(clock);
    server = world.server("s1", overrides);
    sql = world.sql(server).pool();
  }

  /**
   * A server whose per-user write rate and anonymous-session timeout do not get in the way of a few hundred requests
   * a second and of a session that waits while other properties run (both limits have tests of their own).
   */
  public static FuzzServer start() {
    return start("{}");
  }

  /** As {@link #start()}, with more config: {@code sectionsJson} holds whole sections other than limits. */
  public static FuzzServer start(String sectionsJson) {
    ObjectNode overrides = TestServer.json(sectionsJson);
    // an anonymous session of one property waits while the others run: not closed for it (the limit has its tests)
    overrides.putObject("limits").put("sendsPerUserPerS", 1_000_000).put("authTimeoutMs", 3_600_000);
    return new FuzzServer(overrides);
  }

  /**
   * Asserts that nothing was logged at ERROR since the server started: a bug behind a request's answer (a relay,
   * a delivery attempt) shows there even when the answer itself was fine. An error of an earlier try's background
   * work may surface at a later try; the message names it.
   */
  public void assertNoErrorLogged(String after) {
    assertThat(errorsLogged.get()).as("ERROR lines logged (the last: %s) by %s", lastError, abbreviate(after))
        .isZero();
  }

  private static ch.qos.logback.classic.Logger rootLogger() {
    return (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
  }

  /** Row counts of every table, by table. */
  public Map<String, Long> rows() {
    StringBuilder query = new StringBuilder("SELECT ");
    for (int i = 0; i < TABLES.size(); i++) {
      query.append(i == 0 ? "" : ", ").append("(SELECT count(*) FROM ").append(TABLES.get(i)).append(')');
    }
    Row row = await(sql.query(query.toString()).execute()).iterator().next();
    Map<String, Long> counts = new LinkedHashMap<>();
    for (int i = 0; i < TABLES.size(); i++) {
      counts.put(TABLES.get(i), row.getLong(i));
    }
    return counts;
  }

  /**
   * Writes {@code text} as one frame on {@code session} and returns the next frame that carries a status (the
   * answer to it: the session has nothing else in flight). Events in between are skipped.
   */
  public JsonNode exchange(ShineClient session, String text) {
    Promise<JsonNode> reply = Promise.promise();
    session.onRawFrame(frame -> {
      if (frame.has("status")) {
        reply.tryComplete(frame);
      }
    });
    try {
      await(session.sendRaw(text));
      return await(reply.future());
    } finally {
      session.onRawFrame(frame -> { });
    }
  }

  /** Asserts the answer to a hostile frame: a status below 500 and, for an error, a code and a message. */
  public static void assertAnswered(JsonNode answer, String sent) {
    int status = answer.path("status").asInt();
    String what = abbreviate(sent) + " -> " + abbreviate(answer.toString());
    assertThat(status).as("status of %s", what).isBetween(200, 499);
    if (status != 200) {
      assertThat(answer.at("/error/code").asText()).as("error code of %s", what).matches("[A-Z][A-Z0-9_]*");
      assertThat(answer.at("/error/message").asText()).as("error message of %s", what).isNotBlank();
    }
  }

  /** The frame's size in UTF-8 bytes. */
  public static int utf8Bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8).length;
  }

  public static String abbreviate(String text) {
    return text.length() > 400 ? text.substring(0, 400) + "...(" + text.length() + " chars)" : text;
  }

  public static <T> T await(Future<T> future) {
    try {
      return future.await(WAIT_S, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("no answer within " + WAIT_S + " s", e);
    }
  }

  @Override
  public void close() {
    rootLogger().detachAppender(errorCounter);
    try {
      world.close();
    } finally {
      vertx.close().await();
    }
  }
}
