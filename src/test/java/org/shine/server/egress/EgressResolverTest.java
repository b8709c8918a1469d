package org.shine.server.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.util.Cidr;

/**
 * How a dial's destination is found (PROTOCOL §13), with a name service of the test's own that answers loopback
 * stand-ins only: every address of a name is checked, the answer is an address that was checked, a configured peer
 * is always allowed, lookups are bounded and remembered.
 */
class EgressResolverTest {
  private static final EgressPolicy POLICY = new EgressPolicy(List.of("127.0.0.9/32"), List.of("127.0.0.0/8"));
  private final AtomicInteger lookups = new AtomicInteger();
  private final Map<String, List<String>> names = Map.of(
      "good.test", List.of("127.0.0.1"),
      "evil.test", List.of("127.0.0.9"),
      "mixed.test", List.of("127.0.0.2", "127.0.0.9"),
      "mapped.test", List.of("::ffff:127.0.0.9"));
  private Vertx vertx;
  private EgressResolver resolver;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    resolver = new EgressResolver(vertx, POLICY, host -> {
      lookups.incrementAndGet();
      List<String> found = names.get(host);
      if (found == null) {
        throw new UnknownHostException(host);
      }
      return found.stream().map(Cidr::literal).toArray(InetAddress[]::new);
    });
  }

  @AfterEach
  void stop() {
    resolver.close();
    vertx.close().await();
  }

  @Test
  @DisplayName("a name whose addresses are all allowed resolves to one of them, with its port, scheme and host kept")
  void allowedName() throws Exception {
    EgressResolver.Destination destination = await(resolver.resolve("wss://good.test/ws", false));

    assertThat(destination.address().getHostAddress()).isEqualTo("127.0.0.1");
    assertThat(destination.host()).isEqualTo("good.test");
    assertThat(destination.port()).isEqualTo(443);
    assertThat(destination.secure()).isTrue();
    assertThat(destination.loopback()).isTrue();
  }

  @Test
  @DisplayName("a name with one refused address among others is refused: every address is checked")
  void everyAddressChecked() {
    assertRefused(resolver.resolve("ws://evil.test:7000/ws", false));
    assertRefused(resolver.resolve("ws://mixed.test:7000/ws", false));
    assertRefused(resolver.resolve("ws://mapped.test:7000/ws", false));
    assertRefused(resolver.resolve("ws://127.0.0.9:7000/ws", false));
    assertRefused(resolver.resolve("ws://[::ffff:127.0.0.9]:7000/ws", false));
    assertRefused(resolver.resolve("ws://nowhere.test:7000/ws", false));
  }

  @Test
  @DisplayName("a configured peer is always allowed, whatever its address")
  void configuredPeerAllowed() throws Exception {
    assertThat(await(resolver.resolve("ws://evil.test:7000/ws", true)).address().getHostAddress())
        .isEqualTo("127.0.0.9");
  }

  @Test
  @DisplayName("a literal is never looked up; a name is looked up once and remembered")
  void lookupsRemembered() throws Exception {
    await(resolver.resolve("ws://127.0.0.3:1/ws", false));
    assertThat(lookups.get()).isZero();

    await(resolver.resolve("ws://good.test:1/ws", false));
    await(resolver.resolve("ws://good.test:2/ws", false));
    assertThat(lookups.get()).isEqualTo(1);
  }

  @Test
  @DisplayName("at most MAX_PENDING lookups wait at once; beyond, a resolve is refused at once")
  void pendingBounded() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    EgressResolver slow = new EgressResolver(vertx, POLICY, host -> {
      try {
        release.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return new InetAddress[] {Cidr.literal("127.0.0.1")};
    });
    try {
      List<Future<EgressResolver.Destination>> waiting = new ArrayList<>();
      for (int i = 0; i < EgressResolver.MAX_PENDING; i++) {
        waiting.add(slow.resolve("ws://slow" + i + ".test:1/ws", false));
      }
      Future<EgressResolver.Destination> beyond = slow.resolve("ws://one-more.test:1/ws", false);

      assertThat(beyond.failed()).isTrue();
      assertThat(beyond.cause()).isInstanceOf(EgressResolver.RefusedException.class);
      assertThat(slow.pending()).isEqualTo(EgressResolver.MAX_PENDING);
      release.countDown();
      for (Future<EgressResolver.Destination> each : waiting) {
        await(each);
      }
      assertThat(slow.pending()).isZero();
    } finally {
      release.countDown();
      slow.close();
    }
  }

  @Test
  @DisplayName("a server session needs TLS, a loopback destination or a peer configured insecure")
  void sessionTransport() {
    InetAddress any = Cidr.literal("127.0.0.1");
    assertThat(new EgressResolver.Destination("h", 80, false, any, false).allowsSession(false)).isFalse();
    assertThat(new EgressResolver.Destination("h", 80, false, any, false).allowsSession(true)).isTrue();
    assertThat(new EgressResolver.Destination("h", 443, true, any, false).allowsSession(false)).isTrue();
    assertThat(new EgressResolver.Destination("h", 80, false, any, true).allowsSession(false)).isTrue();
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  private static void assertRefused(Future<?> future) {
    assertThatThrownBy(() -> await(future)).hasCauseInstanceOf(EgressResolver.RefusedException.class);
  }
}
