package org.shine.server.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.KeyFile;
import org.shine.server.support.StubPeer;
import org.shine.server.util.Json;

/** The client side of "a 503 does not mean not stored": what goes again is the same signed bytes. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class ResenderIT {
  private static final String SEND = "SendMessagePair";
  private static final KeyFile ALICE = KeyFile.generate("alice");
  private static final Resender.Policy QUICK = new Resender.Policy(5, 10, 50, 500);

  @Test
  @DisplayName("after a 503 and a 500 the same bytes are sent again (same messageKey and nonce) until the 200")
  void resendsTheSameBytesAfter503(Vertx vertx) throws Exception {
    AtomicInteger sends = new AtomicInteger();
    try (StubPeer server = StubPeer.start(vertx).respond(SEND, (op, p) -> switch (sends.incrementAndGet()) {
      case 1 -> new StubPeer.Error(503, "STORAGE_UNAVAILABLE", "storage is unavailable");
      case 2 -> new StubPeer.Error(500, "INTERNAL", "internal error");
      default -> Json.MAPPER.createObjectNode().put("deliveryState", "accepted");
    })) {
      SignedPair pair = pair();
      Resender resender = new Resender(vertx, null, () -> ShineClient.connect(vertx, server.url()), QUICK);

      JsonNode answer = resender.sendPair(pair).await(10, TimeUnit.SECONDS);

      assertThat(answer.path("deliveryState").asText()).isEqualTo("accepted");
      assertSameBytes(sent(server), pair, 3);
    }
  }

  @Test
  @DisplayName("after a lost connection and after no answer in time, it reconnects and sends the same bytes")
  void resendsTheSameBytesAfterConnectionLossAndTimeout(Vertx vertx) throws Exception {
    AtomicInteger sends = new AtomicInteger();
    StubPeer[] holder = new StubPeer[1];
    try (StubPeer server = StubPeer.start(vertx).respond(SEND, (op, p) -> switch (sends.incrementAndGet()) {
      case 1 -> {
        // the request arrived (it may be stored), then the connection is lost before the answer
        holder[0].dropConnections();
        yield Promise.promise().future();
      }
      case 2 -> Promise.promise().future();
      default -> Json.MAPPER.createObjectNode().put("deliveryState", "delivered");
    })) {
      holder[0] = server;
      SignedPair pair = pair();
      AtomicInteger connects = new AtomicInteger();
      Resender resender = new Resender(vertx, null, () -> {
        connects.incrementAndGet();
        return ShineClient.connect(vertx, server.url());
      }, QUICK);

      JsonNode answer = resender.sendPair(pair).await(10, TimeUnit.SECONDS);

      assertThat(answer.path("deliveryState").asText()).isEqualTo("delivered");
      assertThat(connects.get()).as("a new connection after the lost one").isEqualTo(2);
      assertSameBytes(sent(server), pair, 3);
    }
  }

  @Test
  @DisplayName("a 4xx other than 429 is final: sent once, the error is returned")
  void clientErrorsAreFinal(Vertx vertx) {
    try (StubPeer server = StubPeer.start(vertx)
        .respond(SEND, (op, p) -> new StubPeer.Error(400, "BAD_SIGNATURE", "no"))) {
      Resender resender = new Resender(vertx, null, () -> ShineClient.connect(vertx, server.url()), QUICK);

      Future<JsonNode> answer = resender.sendPair(pair());

      assertThatThrownBy(() -> answer.await(10, TimeUnit.SECONDS)).isInstanceOfSatisfying(
          ShineClientException.class, e -> assertThat(e.code()).isEqualTo("BAD_SIGNATURE"));
      assertThat(sent(server)).hasSize(1);
    }
  }

  private static SignedPair pair() {
    return ShineClient.signPair("alice", ALICE, "bob", System.currentTimeMillis(), ShineClient.randomNonce(), 0,
        "hello".getBytes(StandardCharsets.UTF_8));
  }

  private static List<JsonNode> sent(StubPeer server) {
    return server.requests().stream().filter(r -> SEND.equals(r.op())).map(StubPeer.Request::payload).toList();
  }

  private static void assertSameBytes(List<JsonNode> sent, SignedPair pair, int times) throws Exception {
    assertThat(sent).hasSize(times);
    for (JsonNode payload : sent) {
      DmContainer incoming = DmCodec.parse(Base64.getDecoder().decode(payload.path("incomingBlobB64").asText()));
      assertThat(incoming.messageKey()).isEqualTo(pair.incoming().messageKey());
      assertThat(incoming.nonce()).isEqualTo(pair.incoming().nonce());
      assertThat(payload.path("incomingBlobB64").asText())
          .isEqualTo(Base64.getEncoder().encodeToString(pair.incoming().bytes()));
      assertThat(payload.path("outgoingBlobB64").asText())
          .isEqualTo(Base64.getEncoder().encodeToString(pair.outgoing().bytes()));
    }
  }
}
