package org.shine.server.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link OutOfMemoryHalt} on a real Vert.x instance, with the halt recorded instead of ending the test JVM. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 30, timeUnit = TimeUnit.SECONDS)
class OutOfMemoryHaltTest {
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() {
    vertx.close().await();
  }

  @Test
  @DisplayName("an OutOfMemoryError thrown by a handler halts the process with status 3")
  void haltsOnOutOfMemory() {
    CompletableFuture<Integer> halted = new CompletableFuture<>();
    OutOfMemoryHalt.install(vertx, halted::complete);

    vertx.runOnContext(v -> {
      throw new OutOfMemoryError("Java heap space (thrown by the test)");
    });

    assertThat(halted.orTimeout(10, TimeUnit.SECONDS).join()).isEqualTo(OutOfMemoryHalt.STATUS);
  }

  @Test
  @DisplayName("an OutOfMemoryError wrapped as the cause of another failure halts too")
  void haltsOnWrappedOutOfMemory() {
    CompletableFuture<Integer> halted = new CompletableFuture<>();
    OutOfMemoryHalt.install(vertx, halted::complete);

    vertx.runOnContext(v -> {
      throw new IllegalStateException("while encoding", new OutOfMemoryError("Direct buffer memory"));
    });

    assertThat(halted.orTimeout(10, TimeUnit.SECONDS).join()).isEqualTo(OutOfMemoryHalt.STATUS);
  }

  @Test
  @DisplayName("any other failure of a handler is logged and the process goes on")
  void otherFailuresDoNotHalt() {
    CompletableFuture<Integer> halted = new CompletableFuture<>();
    OutOfMemoryHalt.install(vertx, halted::complete);
    CompletableFuture<Void> after = new CompletableFuture<>();
    Context context = vertx.getOrCreateContext();

    // one context runs its tasks in order: the second runs after the first's failure was handled
    context.runOnContext(v -> {
      throw new IllegalStateException("an ordinary bug (thrown by the test)");
    });
    context.runOnContext(v -> after.complete(null));

    after.orTimeout(10, TimeUnit.SECONDS).join();
    assertThat(halted).isNotDone();
  }
}
