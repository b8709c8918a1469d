package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.support.Eventually;
import org.shine.server.support.MutableClock;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class DrainIT {

  @Test
  @DisplayName("stopping the server answers every request already in flight before the connection closes")
  void drainFinishesInFlightRequests(Vertx vertx) throws Exception {
    MutableClock clock = MutableClock.now();
    try (TestWorld world = TestWorld.on(vertx).clock(clock)) {
      TestServer server = world.server("s1",
          "{\"limits\":{\"maxInFlightPerConnection\":256,\"sendsPerUserPerS\":100000}}");
      TestUser alice = world.user("alice", server);
      world.user("bob", server);
      ShineClient session = world.session(alice, server);
      Pool sql = world.sql(server).pool();
      // GIVEN the message table is locked against writes (reads go on), so no send can finish
      SqlConnection locker = sql.getConnection().await(10, TimeUnit.SECONDS);
      Transaction lock = locker.begin().await(10, TimeUnit.SECONDS);
      locker.query("LOCK TABLE dm_message IN EXCLUSIVE MODE").execute().await(10, TimeUnit.SECONDS);
      List<Future<JsonNode>> sends = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        sends.add(session.sendPair(ShineClient.signPair("alice", alice.key(), "bob", clock.millis(),
            ShineClient.randomNonce(), 0, ("drain " + i).getBytes(StandardCharsets.UTF_8))));
      }
      // and the server has read all 200: it reads one connection's frames in order, and a request sent after
      // them, which needs no write, has been answered
      settings(session).await(30, TimeUnit.SECONDS);

      // WHEN the server drains, as seen on that connection (a new request there is refused as shutting down)
      Future<Void> drain = server.drain();
      Eventually.until("the gateway of this connection is draining", 30_000, () -> shuttingDown(session));
      assertThat(drain.isComplete()).as("the drain waits for the sends in flight").isFalse();
      lock.commit().await(10, TimeUnit.SECONDS);
      locker.close().await(10, TimeUnit.SECONDS);
      drain.await(30, TimeUnit.SECONDS);
      Future.join(new ArrayList<>(sends)).otherwiseEmpty().await(30, TimeUnit.SECONDS);

      // THEN every request was answered with 200 and stored
      assertThat(sends).allSatisfy(send -> assertThat(send.succeeded())
          .as("send failed: %s", send.cause()).isTrue());
      server.vertx().close().await();
      assertThat(world.sql(server).count("SELECT count(*) FROM dm_message WHERE owner = 'alice'")).isEqualTo(200);
    }
  }

  private static Future<JsonNode> settings(ShineClient session) {
    return session.request("GetUserSettings", ShineClient.object());
  }

  /**
   * True once a request on {@code session} is refused because the server is shutting down, false while it is still
   * served; any other outcome (the connection lost, say) fails the test.
   */
  private static boolean shuttingDown(ShineClient session) {
    Future<JsonNode> probe = settings(session);
    try {
      probe.otherwiseEmpty().await(10, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("no answer to a probe within 10 s", e);
    }
    if (probe.succeeded()) {
      return false;
    }
    assertThat(probe.cause()).isInstanceOfSatisfying(ShineClientException.class, refused -> {
      assertThat(refused.status()).as("probe refused: %s", refused.getMessage()).isEqualTo(503);
      assertThat(refused.code()).isEqualTo(ErrorCode.OVERLOADED);
    });
    return true;
  }
}
