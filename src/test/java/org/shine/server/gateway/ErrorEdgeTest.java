package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.bus.BusReplies;
import org.shine.server.bus.Failures;
import org.shine.server.metrics.SendOutcome;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.ProtocolErrors;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.support.LogCapture;
import org.shine.server.util.Json;

/**
 * Every failure of a request becomes one error frame at one edge (PROTOCOL §2): classified, logged at the level its
 * kind deserves, counted in {@code shine_sends_total} for a SendMessagePair, written once.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class ErrorEdgeTest {
  private static final String SEND = "SendMessagePair";
  private final ShineMetrics metrics = ShineMetrics.forNode("e1", true);
  private final PrometheusMeterRegistry meters = metrics.scrapeRegistry().orElseThrow();
  private final List<String> written = new ArrayList<>();
  private final AtomicBoolean storageUp = new AtomicBoolean(true);
  private final AtomicInteger suspicions = new AtomicInteger();
  private final Session session = new Session(new FakeSocket(40_000).socket, 1);
  private final ErrorEdge edge = new ErrorEdge(new Frames(Json.MAPPER), metrics, storageUp::get,
      suspicions::incrementAndGet, (to, frame) -> {
        assertThat(to).isSameAs(session);
        written.add(frame);
      });

  @Test
  @DisplayName("a client error is written once as the error frame of its op and requestId, logged at debug with its"
      + " message and no stack trace, and a SendMessagePair is counted refused")
  void clientError() throws Exception {
    session.login = "alice";
    try (LogCapture log = LogCapture.of("org.shine.server", Level.DEBUG)) {
      edge.fail(session, SEND, TextNode.valueOf("r1"), ProtocolException.badRequest(ErrorCode.INVALID_FIELD,
          "the blob is not base64"));

      assertThat(written).hasSize(1);
      JsonNode frame = Json.MAPPER.readTree(written.get(0));
      assertThat(frame.path("op").asText()).isEqualTo(SEND);
      assertThat(frame.path("requestId").asText()).isEqualTo("r1");
      assertThat(frame.path("status").asInt()).isEqualTo(400);
      assertThat(frame.path("error").path("code").asText()).isEqualTo(ErrorCode.INVALID_FIELD);
      assertThat(frame.path("error").path("message").asText()).isEqualTo("the blob is not base64");
      assertThat(log.text()).contains("DEBUG").contains("request refused [op: SendMessagePair, session: alice,"
          + " status: 400, code: INVALID_FIELD]: the blob is not base64").doesNotContain("\tat ");
    }
    assertThat(sends(SendOutcome.REFUSED)).isEqualTo(1);
    assertThat(sends(SendOutcome.ERROR) + sends(SendOutcome.OVERLOADED)).isZero();
    assertThat(suspicions).hasValue(0);
  }

  @Test
  @DisplayName("an unexpected failure is 500 INTERNAL without its details on the wire, its stack logged once at"
      + " ERROR, a warning naming the request, and a SendMessagePair counted error")
  void unexpectedFailure() throws Exception {
    try (LogCapture log = LogCapture.of("org.shine.server", Level.DEBUG)) {
      edge.fail(session, SEND, IntNode.valueOf(9), new IllegalStateException("secret detail"));

      JsonNode frame = Json.MAPPER.readTree(written.get(0));
      assertThat(written).hasSize(1);
      assertThat(frame.path("requestId").asInt()).isEqualTo(9);
      assertThat(frame.path("status").asInt()).isEqualTo(500);
      assertThat(frame.path("error").path("code").asText()).isEqualTo(ErrorCode.INTERNAL);
      assertThat(frame.path("error").path("message").asText()).isEqualTo("internal error");
      String text = log.text();
      assertThat(text.lines().filter(line -> line.contains("ERROR"))).singleElement().asString()
          .contains(Failures.class.getSimpleName(), "internal error");
      assertThat(text).contains("java.lang.IllegalStateException: secret detail", "\tat ");
      assertThat(text.lines().filter(line -> line.contains("WARN"))).singleElement().asString()
          .contains("request failed [op: SendMessagePair, session: anonymous 127.0.0.1:40000, status: 500,"
              + " code: INTERNAL]");
    }
    assertThat(sends(SendOutcome.ERROR)).isEqualTo(1);
  }

  @Test
  @DisplayName("429 and 503 answers to a SendMessagePair are counted overloaded; other ops count nothing")
  void overloadCounts() {
    edge.fail(session, SEND, IntNode.valueOf(1), new ProtocolException(429, ErrorCode.RATE_LIMITED, "slow down"));
    edge.fail(session, SEND, IntNode.valueOf(2), new ProtocolException(503, ErrorCode.OVERLOADED, "busy"));
    edge.fail(session, "GetUserCard", IntNode.valueOf(3), ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "x"));

    assertThat(written).hasSize(3);
    assertThat(sends(SendOutcome.OVERLOADED)).isEqualTo(2);
    assertThat(sends(SendOutcome.REFUSED)).isZero();
  }

  @Test
  @DisplayName("storage trouble is 503 STORAGE_UNAVAILABLE, logged at debug only, and asks the node to check its"
      + " database")
  void storageUnavailable() throws Exception {
    try (LogCapture log = LogCapture.of("org.shine.server", Level.DEBUG)) {
      edge.fail(session, "GetDirectMessages", TextNode.valueOf("r"), ProtocolErrors.storageUnavailable());

      JsonNode frame = Json.MAPPER.readTree(written.get(0));
      assertThat(frame.path("status").asInt()).isEqualTo(503);
      assertThat(frame.path("error").path("code").asText()).isEqualTo(ErrorCode.STORAGE_UNAVAILABLE);
      assertThat(suspicions).hasValue(1);
      assertThat(log.text()).contains("DEBUG").contains("request failed [op: GetDirectMessages")
          .doesNotContain("WARN", "ERROR");
    }
  }

  @Test
  @DisplayName("a bus timeout is 503 OVERLOADED while the database is up, and 503 STORAGE_UNAVAILABLE once it is"
      + " known down")
  void timeouts(Vertx vertx, VertxTestContext test) {
    vertx.eventBus().consumer("test.silent", message -> { });
    BusReplies.request(vertx.eventBus(), "test.silent", "ping", 1).onComplete(test.failing(timeout ->
        test.verify(() -> {
          edge.fail(session, SEND, IntNode.valueOf(1), timeout);
          storageUp.set(false);
          edge.fail(session, SEND, IntNode.valueOf(2), timeout);

          JsonNode up = Json.MAPPER.readTree(written.get(0));
          assertThat(up.path("status").asInt()).isEqualTo(503);
          assertThat(up.path("error").path("code").asText()).isEqualTo(ErrorCode.OVERLOADED);
          JsonNode down = Json.MAPPER.readTree(written.get(1));
          assertThat(down.path("status").asInt()).isEqualTo(503);
          assertThat(down.path("error").path("code").asText()).isEqualTo(ErrorCode.STORAGE_UNAVAILABLE);
          assertThat(suspicions).hasValue(1);
          assertThat(sends(SendOutcome.OVERLOADED)).isEqualTo(2);
          test.completeNow();
        })));
  }

  @Test
  @DisplayName("an answer is written as the response of its op and requestId; a SendMessagePair is counted by the"
      + " delivery state it carries")
  void answers() throws Exception {
    edge.answer(session, SEND, TextNode.valueOf("a"), Json.MAPPER.createObjectNode().put("deliveryState", "delivered"));
    edge.answer(session, SEND, TextNode.valueOf("b"), Json.MAPPER.createObjectNode().put("deliveryState", "accepted"));
    edge.answer(session, SEND, TextNode.valueOf("c"), Json.MAPPER.createObjectNode().put("deliveryState", "failed"));
    edge.answer(session, "GetUserCard", TextNode.valueOf("d"), Json.MAPPER.createObjectNode());

    assertThat(written).hasSize(4);
    JsonNode first = Json.MAPPER.readTree(written.get(0));
    assertThat(first.path("op").asText()).isEqualTo(SEND);
    assertThat(first.path("requestId").asText()).isEqualTo("a");
    assertThat(first.path("status").asInt()).isEqualTo(200);
    assertThat(first.path("payload").path("deliveryState").asText()).isEqualTo("delivered");
    assertThat(sends(SendOutcome.DELIVERED)).isEqualTo(1);
    assertThat(sends(SendOutcome.ACCEPTED)).isEqualTo(1);
    assertThat(sends(SendOutcome.FAILED)).isEqualTo(1);
  }

  private double sends(SendOutcome outcome) {
    return meters.get(ShineMetrics.SENDS).tag(ShineMetrics.OUTCOME, outcome.tag()).counter().count();
  }
}
