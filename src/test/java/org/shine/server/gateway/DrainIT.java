package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.support.MutableClock;
import org.shine.server.support.TestDatabase;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;

@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class DrainIT {

  @Test
  @DisplayName("stopping the server answers every request already in flight before the connection closes")
  void drainFinishesInFlightRequests(Vertx vertx) throws Exception {
    MutableClock clock = MutableClock.now();
    try (TestDatabase database = TestDatabase.create(vertx)) {
      TestServer server = TestServer.start("s1", database.config(), clock,
          "{\"limits\":{\"maxInFlightPerConnection\":256}}");
      TestUser alice = TestUser.create("alice").registerOn(vertx, server);
      TestUser.create("bob").registerOn(vertx, server);
      ShineClient session = alice.session(vertx, server);
      List<Future<JsonNode>> sends = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        sends.add(session.sendPair(ShineClient.signPair("alice", alice.key(), "bob", clock.millis(),
            ShineClient.randomNonce(), 0, ("drain " + i).getBytes(StandardCharsets.UTF_8))));
      }

      // WHEN the server drains once it has started answering, with most requests still in flight
      sends.get(0).await(30, TimeUnit.SECONDS);
      server.drain().await(30, TimeUnit.SECONDS);
      Future.join(new ArrayList<>(sends)).otherwiseEmpty().await(30, TimeUnit.SECONDS);

      // THEN every request was answered with 200 and stored
      assertThat(sends).allSatisfy(send -> assertThat(send.succeeded())
          .as("send failed: %s", send.cause()).isTrue());
      server.vertx().close().await();
      Pool sql = database.pool();
      long stored = sql.query("SELECT count(*) FROM dm_message WHERE owner = 'alice'").execute().await()
          .iterator().next().getLong(0);
      sql.close().await();
      assertThat(stored).isEqualTo(200);
    }
  }
}
