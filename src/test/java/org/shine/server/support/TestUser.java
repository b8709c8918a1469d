package org.shine.server.support;

import io.vertx.core.Vertx;
import java.util.List;
import java.util.Map;
import org.shine.server.dm.KeyFile;
import org.shine.server.client.ShineClient;

/** A user with a key pair, registered on given servers, and helpers to open logged-in sessions. */
public record TestUser(String login, KeyFile key) {

  public static TestUser create(String login) {
    return new TestUser(login, KeyFile.generate(login));
  }

  /** Publishes this user's card (version 1) on every server it lists. */
  public TestUser registerOn(Vertx vertx, TestServer... servers) {
    List<Map.Entry<String, String>> routes = java.util.Arrays.stream(servers)
        .map(s -> Map.entry(s.serverLogin(), s.url())).toList();
    for (TestServer server : servers) {
      ShineClient client = ShineClient.connect(vertx, server.url()).await();
      try {
        client.publishCard(login, key, routes, 1).await();
      } finally {
        client.close().await();
      }
    }
    return this;
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
}
