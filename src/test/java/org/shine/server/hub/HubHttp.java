package org.shine.server.hub;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.CompletableFuture;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.util.Json;

/** The hub API of one test server as its clients call it: real HTTP requests over loopback. */
public final class HubHttp {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private final String base;
  private final String serverLogin;

  public HubHttp(TestServer server) {
    this.base = "http://127.0.0.1:" + server.port() + "/hub/v1";
    this.serverLogin = server.serverLogin();
  }

  /** Challenge, sign, token: a new pair for {@code user} (asserted 200). */
  public JsonNode tokens(TestUser user) throws Exception {
    HttpResponse<String> response = token(user, challenge(user));
    assertThat(response.statusCode()).isEqualTo(200);
    return Json.MAPPER.readTree(response.body());
  }

  /** A new challenge for {@code user} (asserted 200). */
  String challenge(TestUser user) throws Exception {
    HttpResponse<String> response = get("/challenge?login=" + user.login(), null);
    assertThat(response.statusCode()).isEqualTo(200);
    return Json.MAPPER.readTree(response.body()).get("challengeB64").asText();
  }

  /** Answers {@code challengeB64} with {@code user}'s signature. */
  HttpResponse<String> token(TestUser user, String challengeB64) throws Exception {
    byte[] signature = Ed25519Signer.sign(user.key().privateKey(),
        ("SHiNE_HUB|" + serverLogin + "|" + challengeB64).getBytes(StandardCharsets.UTF_8));
    return post("/token", null, Json.MAPPER.createObjectNode().put("login", user.login())
        .put("challengeB64", challengeB64).put("signatureB64", Base64.getEncoder().encodeToString(signature))
        .toString());
  }

  HttpResponse<String> refresh(String refreshToken) throws Exception {
    return post("/token/refresh", null, Json.MAPPER.createObjectNode().put("refreshToken", refreshToken).toString());
  }

  HttpRequest.Builder request(String path, String token) {
    HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(20));
    if (token != null) {
      builder.header("Authorization", "Bearer " + token);
    }
    return builder;
  }

  public HttpResponse<String> get(String path, String token) throws Exception {
    return send(request(path, token).GET().build());
  }

  public HttpResponse<String> post(String path, String token, String body) throws Exception {
    return send(request(path, token).header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build());
  }

  HttpResponse<String> send(HttpRequest request) throws Exception {
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
  }

  CompletableFuture<HttpResponse<String>> sendAsync(HttpRequest request) {
    return HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofString());
  }

  /**
   * Sends on a new HTTP/1.1 connection that no other request shares (the shared client may multiplex requests on
   * one HTTP/2 connection, which one gateway instance serves).
   */
  CompletableFuture<HttpResponse<String>> onOwnConnection(HttpRequest request) {
    return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()
        .sendAsync(request, HttpResponse.BodyHandlers.ofString());
  }

  /** The body of a 200 answer (asserted). */
  static JsonNode ok(HttpResponse<String> response) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    try {
      return Json.MAPPER.readTree(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
