package org.shine.server.support;

import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.dm.KeyFile;

/** A user with a key pair, registered on given servers, and helpers to open logged-in sessions and sign pairs. */
public record TestUser(String login, KeyFile key) {

  public static TestUser create(String login) {
    return new TestUser(login, KeyFile.generate(login));
  }

  /** Publishes this user's card (version 1, routes: {@code servers} in order) on every server it lists. */
  public TestUser registerOn(Vertx vertx, TestServer... servers) {
    List<String> urls = java.util.Arrays.stream(servers).map(TestServer::url).toList();
    return publish(vertx, TestWorld.routes(servers), 1, urls.toArray(String[]::new));
  }

  /** Publishes a card (routes: serverLogin → url, in order) on every URL of {@code publishOn}. */
  public TestUser publish(Vertx vertx, List<Map.Entry<String, String>> routes, long version, String... publishOn) {
    for (String url : publishOn) {
      ShineClient client = ShineClient.connect(vertx, url).await();
      try {
        client.publishCard(login, key, routes, version).await();
      } finally {
        client.close().await();
      }
    }
    return this;
  }

  /** A new logged-in session on {@code server}. */
  public ShineClient session(Vertx vertx, TestServer server) {
    ShineClient client = ShineClient.connect(vertx, server.url()).await();
    client.login(login, key).await();
    return client;
  }

  /** A fresh pair (revision 0, created now) from this user to {@code to}. */
  public SignedPair pairTo(TestUser to, String text) {
    return pairTo(to.login(), text);
  }

  public SignedPair pairTo(String to, String text) {
    return pairTo(to, System.currentTimeMillis(), text.getBytes(StandardCharsets.UTF_8));
  }

  /** A fresh pair (revision 0, random nonce) created at {@code createdAtMs}. */
  public SignedPair pairTo(String to, long createdAtMs, byte[] body) {
    return ShineClient.signPair(login, key, to, createdAtMs, ShineClient.randomNonce(), 0, body);
  }
}
