package org.shine.server.util;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.concurrent.EventExecutor;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.internal.VertxInternal;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link Liveness}: every event loop of a real Vert.x instance must run a no-op within the bound. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class LivenessTest {
  private final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(3)
      .setBlockedThreadCheckInterval(60_000));
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void close() {
    release.countDown();
    vertx.close().await();
  }

  @Test
  @DisplayName("every event loop answering makes the node alive, and the report names how many loops it asked")
  void everyLoopAnswers() {
    Liveness.Report report = onContext(new Liveness(vertx, 2_000));

    assertThat(report.alive()).isTrue();
    assertThat(report.eventLoops()).isEqualTo(3);
    assertThat(report.silent()).isZero();
  }

  @Test
  @DisplayName("one wedged event loop makes the node not alive within the bound")
  void oneWedgedLoop() throws Exception {
    EventExecutor last = null;
    for (EventExecutor loop : ((VertxInternal) vertx).nettyEventLoopGroup()) {
      last = loop;
    }
    CountDownLatch wedged = new CountDownLatch(1);
    // a handler that never returns: the loop is alive as a thread but runs nothing else
    last.execute(() -> {
      wedged.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    wedged.await();

    Liveness.Report report = onContext(new Liveness(vertx, 300));

    assertThat(report.alive()).isFalse();
    assertThat(report.silent()).isEqualTo(1);
    assertThat(report.boundMs()).isEqualTo(300);
  }

  /** Runs one check from an event-loop context that is not the wedged one, as the gateway does. */
  private Liveness.Report onContext(Liveness liveness) {
    var context = ((VertxInternal) vertx).createEventLoopContext();
    var result = new java.util.concurrent.CompletableFuture<Liveness.Report>();
    context.runOnContext(v -> liveness.check().onComplete(ar -> {
      if (ar.succeeded()) {
        result.complete(ar.result());
      } else {
        result.completeExceptionally(ar.cause());
      }
    }));
    return result.join();
  }
}
