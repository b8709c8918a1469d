package org.shine.server.adapter;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Objects;
import org.shine.server.dm.KeyFile;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.util.Json;

/** A blocking client of one server's hub ({@code http://host:port/hub/v1}); runs on the adapter's own threads. */
public final class HubClient {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final String base;

  public HubClient(String serverHttpUrl) {
    this.base = Objects.requireNonNull(serverHttpUrl).replaceAll("/+$", "") + "/hub/v1";
  }

  /**
   * Challenge, sign, token: a fresh token pair for {@code login}. {@code serverLogin} null takes the one the
   * challenge names.
   */
  public Tokens login(String login, KeyFile key, String serverLogin) throws IOException, InterruptedException {
    HttpResponse<String> challenge = send(HttpRequest.newBuilder(URI.create(base + "/challenge?login="
        + URLEncoder.encode(login, StandardCharsets.UTF_8))).GET().timeout(Duration.ofSeconds(10)).build());
    requireOk(challenge);
    JsonNode issued = Json.MAPPER.readTree(challenge.body());
    String challengeB64 = issued.get("challengeB64").asText();
    String signer = serverLogin != null ? serverLogin : issued.path("serverLogin").asText();
    byte[] signature = Ed25519Signer.sign(key.privateKey(),
        ("SHiNE_HUB|" + signer + "|" + challengeB64).getBytes(StandardCharsets.UTF_8));
    String body = Json.MAPPER.createObjectNode().put("login", login).put("challengeB64", challengeB64)
        .put("signatureB64", Base64.getEncoder().encodeToString(signature)).toString();
    HttpResponse<String> token = send(post("/token", body, null));
    requireOk(token);
    return Tokens.from(Json.MAPPER.readTree(token.body()));
  }

  /** A rotated pair, or null when the server rejects the refresh token (the adapter must stop). */
  public Tokens refresh(String refreshToken) throws IOException, InterruptedException {
    String body = Json.MAPPER.createObjectNode().put("refreshToken", refreshToken).toString();
    HttpResponse<String> response = send(post("/token/refresh", body, null));
    if (response.statusCode() == 401) {
      return null;
    }
    requireOk(response);
    return Tokens.from(Json.MAPPER.readTree(response.body()));
  }

  /** One poll: {@code waitS} 0 is a short poll. */
  public HttpResponse<String> poll(String accessToken, long waitS) throws IOException, InterruptedException {
    return send(HttpRequest.newBuilder(URI.create(base + "/messages?waitS=" + waitS))
        .header("Authorization", "Bearer " + accessToken).timeout(Duration.ofSeconds(waitS + 15)).GET().build());
  }

  /** {@code GET /hub/v1/cards/{login}}: 200 with {@code {card}}, 404 when the server has no card for it, 401. */
  public HttpResponse<String> card(String accessToken, String login) throws IOException, InterruptedException {
    return send(HttpRequest.newBuilder(URI.create(base + "/cards/" + URLEncoder.encode(login, StandardCharsets.UTF_8)))
        .header("Authorization", "Bearer " + accessToken).timeout(Duration.ofSeconds(15)).GET().build());
  }

  public HttpResponse<String> ack(String accessToken, String deliveryId) throws IOException, InterruptedException {
    return send(post("/ack/" + URLEncoder.encode(deliveryId, StandardCharsets.UTF_8), "", accessToken));
  }

  private HttpRequest post(String path, String body, String token) {
    HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(base + path))
        .header("content-type", "application/json").timeout(Duration.ofSeconds(15))
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      builder.header("Authorization", "Bearer " + token);
    }
    return builder.build();
  }

  private HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private static void requireOk(HttpResponse<String> response) throws HubRefusedException {
    if (response.statusCode() != 200) {
      throw new HubRefusedException(response.statusCode(), response.body());
    }
  }

  /** The hub answered a status other than 200 (the user is unknown there, the signature does not verify, ...). */
  public static final class HubRefusedException extends IOException {
    private final int status;

    HubRefusedException(int status, String body) {
      super("hub answered " + status + ": " + body);
      this.status = status;
    }

    public int status() {
      return status;
    }
  }

  /** An access/refresh token pair. */
  public record Tokens(String accessToken, String refreshToken, long expiresInS) {
    static Tokens from(JsonNode node) {
      return new Tokens(node.get("accessToken").asText(), node.get("refreshToken").asText(),
          node.path("expiresInS").asLong());
    }
  }
}
