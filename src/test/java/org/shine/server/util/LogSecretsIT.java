package org.shine.server.util;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.DmContainer;
import org.shine.server.hub.HubHttp;
import org.shine.server.support.LogCapture;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/**
 * No secret is ever logged (issue: tokens, keys): a federation of two servers runs every flow that handles one
 * (user and server logins, sends, receipts, settings, hub tokens, refresh, polls, a wrong token) with every
 * logger of the project at DEBUG, and the captured log must not hold any private key or token it used.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class LogSecretsIT {

  @Test
  @DisplayName("a run with every project logger at DEBUG logs no private key and no hub token")
  void noSecretInTheLog() throws Exception {
    LogCapture captured = LogCapture.of("org.shine", Level.DEBUG);
    List<String> secrets = new ArrayList<>();
    Vertx vertx = Vertx.vertx();
    try (TestWorld world = TestWorld.on(vertx)) {
      TestServer[] servers = world.servers("s1", "s2");
      TestServer s1 = servers[0];
      TestServer s2 = servers[1];
      TestUser alice = world.user("alice", s1, s2);
      TestUser bob = world.user("bob", TestWorld.routes(s2), s2, s1);
      secrets.add(b64(alice.key().privateKey()));
      secrets.add(b64(bob.key().privateKey()));
      for (TestServer server : servers) {
        byte[] serverKey = world.sql(server).rows("SELECT private_key FROM server_identity").iterator().next()
            .getBuffer(0).getBytes();
        secrets.add(b64(serverKey));
        secrets.add(HexFormat.of().formatHex(serverKey));
      }

      ShineClient aliceSession = world.session(alice, s1);
      JsonNode sent = aliceSession.sendText("alice", alice.key(), "bob", "a secret-free hello").await();
      ShineClient bobSession = world.session(bob, s2);
      DmContainer receipt = ShineClient.signReceipt("bob", bob.key(), "alice", sent.path("baseKey").asText(),
          System.currentTimeMillis());
      bobSession.sendReadReceipt(receipt).await();
      aliceSession.request("SetUserSetting", ShineClient.object().put("key", "theme").put("value", "dark"))
          .await();
      // a login with a wrong signature, refused: its message must not echo what was sent
      ShineClient stranger = world.anonymous(s1);
      stranger.request("AuthChallenge", ShineClient.object().put("login", "alice")).await();
      String forged = b64(alice.key().privateKey()) + b64(alice.key().privateKey());
      stranger.request("AuthLogin", ShineClient.object().put("login", "alice").put("signatureB64", forged))
          .otherwiseEmpty().await();

      HubHttp hub = new HubHttp(s2);
      JsonNode tokens = hub.tokens(bob);
      String access = tokens.path("accessToken").asText();
      String refresh = tokens.path("refreshToken").asText();
      HttpResponse<String> refreshed = hub.post("/token/refresh", null,
          ShineClient.object().put("refreshToken", refresh).toString());
      JsonNode renewed = Json.MAPPER.readTree(refreshed.body());
      String access2 = renewed.path("accessToken").asText();
      aliceSession.sendText("alice", alice.key(), "bob", "for the hub").await();
      HttpResponse<String> polled = hub.get("/messages?waitS=5", access2);
      hub.post("/ack/" + polled.headers().firstValue("X-Delivery-Id").orElse("0"), access2, "");
      hub.get("/messages?waitS=0", access);
      hub.get("/messages?waitS=0", "not-a-token-" + access);
      secrets.add(access);
      secrets.add(refresh);
      secrets.add(access2);
      secrets.add(renewed.path("refreshToken").asText());
    } finally {
      captured.close();
      vertx.close().await();
    }
    String log = captured.text();

    // the capture saw the run at DEBUG (so the test can fail)
    assertThat(log).contains("card accepted [login: alice").contains("request refused [op: AuthLogin");
    assertThat(secrets).allSatisfy(secret -> assertThat(secret).hasSizeGreaterThan(16));
    for (String secret : secrets) {
      assertThat(log).as("the log holds a secret").doesNotContain(secret);
      assertThat(log).doesNotContain(secret.substring(0, 16));
    }
  }

  private static String b64(byte[] bytes) {
    return Base64.getEncoder().encodeToString(bytes);
  }
}
