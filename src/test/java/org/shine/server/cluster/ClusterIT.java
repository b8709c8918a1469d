package org.shine.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.support.Eventually;
import org.shine.server.support.TestDatabase;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;

/** Two clustered nodes (Hazelcast) of one deployment sharing one database. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class ClusterIT {

  @Test
  @DisplayName("an event for a user reaches the session on the other node of the deployment")
  void eventsCrossNodes(Vertx vertx) {
    String clustered = "{\"cluster\":{\"enabled\":true,\"members\":[\"127.0.0.1\"],\"port\":5801}}";
    try (TestDatabase db = TestDatabase.create(vertx);
        TestServer nodeA = TestServer.start("s1", db.config(), Clock.systemUTC(), clustered);
        TestServer nodeB = TestServer.start("s1", db.config(), Clock.systemUTC(), clustered)) {
      TestUser alice = TestUser.create("alice").registerOn(vertx, nodeA);
      TestUser bob = TestUser.create("bob").registerOn(vertx, nodeA);
      List<JsonNode> onB = new CopyOnWriteArrayList<>();
      bob.session(vertx, nodeB).onEvent(onB::add);

      JsonNode sent = alice.session(vertx, nodeA).sendText("alice", alice.key(), "bob", "across nodes").await();

      assertThat(sent.get("deliveryState").asText()).isEqualTo("delivered");
      Eventually.until("bob's session on node B gets the message", 10_000, () -> !onB.isEmpty());
      assertThat(onB.get(0).at("/payload/baseKey").asText()).isEqualTo(sent.get("baseKey").asText());
      ShineClient history = bob.session(vertx, nodeB);
      assertThat(history.request("GetDirectMessages", ShineClient.object().put("peer", "alice")).await()
          .get("messages")).hasSize(1);
    }
  }
}
