package org.shine.server.bus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;

@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class BusRepliesTest {
  private static final String ADDRESS = "test.serve";

  @Test
  @DisplayName("a served address answers with what its handler completes")
  void repliesWithResult(Vertx vertx) {
    BusReplies.<String, Integer>serve(vertx.eventBus(), ADDRESS, body -> Future.succeededFuture(body.length()))
        .await();

    assertThat(BusReplies.<Integer>request(vertx.eventBus(), ADDRESS, "four").await()).isEqualTo(4);
  }

  @Test
  @DisplayName("a handler's failure reaches the caller as the same typed error, status and code included")
  void failureTravelsTyped(Vertx vertx) {
    ProtocolException refused = new ProtocolException(Status.CONFLICT, ErrorCode.CARD_CONFLICT, "already there");
    BusReplies.<String, String>serve(vertx.eventBus(), ADDRESS, body -> Future.failedFuture(refused)).await();

    Throwable failure = catchThrowable(() -> BusReplies.request(vertx.eventBus(), ADDRESS, "x").await());

    assertThat(failure).isSameAs(refused);
  }

  @Test
  @DisplayName("a handler that throws still answers once, with an internal error rather than a timeout")
  void thrownIsAnswered(Vertx vertx) {
    BusReplies.<String, String>serve(vertx.eventBus(), ADDRESS, body -> {
      throw new IllegalStateException("broken");
    }).await();

    Throwable failure = catchThrowable(() -> BusReplies.request(vertx.eventBus(), ADDRESS, "x", 10_000).await());

    assertThat(failure).isInstanceOf(ProtocolException.class);
    assertThat(((ProtocolException) failure).status()).isEqualTo(Status.INTERNAL);
    assertThat(BusReplies.isTimeout(failure)).isFalse();
  }
}
