package org.shine.server.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.util.Json;

class PendingRequestsTest {
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() throws Exception {
    vertx.close().await(10, TimeUnit.SECONDS);
  }

  @Test
  @DisplayName("requests waiting when the connection closes fail with CONNECTION_CLOSED, and so does any opened after"
      + " it, at once and without a write (a chat whose server went away while it started never hangs)")
  void closedConnection() {
    PendingRequests pending = new PendingRequests(vertx);
    AtomicInteger writes = new AtomicInteger();
    Future<JsonNode> waiting = pending.open("GetDirectMessages", 0, id -> {
      writes.incrementAndGet();
      return Future.succeededFuture();
    });
    assertThat(waiting.isComplete()).isFalse();

    pending.failAll("connection closed");
    assertThat(waiting.failed()).isTrue();
    assertThat(((ShineClientException) waiting.cause()).code()).isEqualTo(ShineClient.CONNECTION_CLOSED);

    Future<JsonNode> after = pending.open("GetDirectMessages", 0, id -> {
      writes.incrementAndGet();
      return Future.succeededFuture();
    });
    assertThat(after.failed()).as("failed at once").isTrue();
    assertThat(((ShineClientException) after.cause()).code()).isEqualTo(ShineClient.CONNECTION_CLOSED);
    assertThat(after.cause()).hasMessageEndingWith("connection closed");
    assertThat(writes).hasValue(1);
  }

  @Test
  @DisplayName("an answer completes its request; a late answer to one that timed out is ignored")
  void answers() throws Exception {
    PendingRequests pending = new PendingRequests(vertx);
    String[] ids = new String[2];
    Future<JsonNode> first = pending.open("AuthChallenge", 0, id -> {
      ids[0] = id;
      return Future.succeededFuture();
    });
    pending.answer(ids[0], Json.MAPPER.readTree("{\"status\":200,\"payload\":{\"ok\":true}}"));
    assertThat(first.result().path("ok").asBoolean()).isTrue();

    Future<JsonNode> second = pending.open("AuthLogin", 1, id -> {
      ids[1] = id;
      return Future.succeededFuture();
    });
    assertThat(second.transform(ar -> Future.succeededFuture(ar.cause())).await(10, TimeUnit.SECONDS))
        .isInstanceOfSatisfying(ShineClientException.class, e -> assertThat(e.code()).isEqualTo(ShineClient.TIMEOUT));
    pending.answer(ids[1], Json.MAPPER.readTree("{\"status\":200,\"payload\":{}}"));
    assertThat(second.failed()).isTrue();
  }
}
