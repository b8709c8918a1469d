package org.shine.server.adapter;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.Objects;
import java.util.Optional;
import org.shine.server.client.ContainerVerifier;
import org.shine.server.util.Json;

/**
 * Authors' cards from the hub ({@code GET /hub/v1/cards/{login}}, PROTOCOL §4 v3 "Hub adapter"), read on the
 * calling thread (the adapter's Phase 2 thread) with the adapter's access token, refreshed once when it has expired.
 * Answers completed futures.
 */
final class HubCards implements ContainerVerifier.CardSource {
  private final HubClient hub;
  private final ReceiveCycle.TokenHolder tokens;

  HubCards(HubClient hub, ReceiveCycle.TokenHolder tokens) {
    this.hub = Objects.requireNonNull(hub);
    this.tokens = Objects.requireNonNull(tokens);
  }

  @Override
  public Future<Optional<JsonNode>> card(String login) {
    try {
      return Future.succeededFuture(read(login));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Future.failedFuture(e);
    } catch (IOException | RuntimeException e) {
      return Future.failedFuture(e);
    }
  }

  private Optional<JsonNode> read(String login) throws IOException, InterruptedException {
    HubClient.Tokens used = tokens.current();
    if (used == null) {
      throw new IOException("no access token (the adapter is not logged in)");
    }
    HttpResponse<String> response = hub.card(used.accessToken(), login);
    if (response.statusCode() == 401) {
      HubClient.Tokens fresh = tokens.refresh(hub, used);
      if (fresh == null) {
        throw new IOException("the refresh token was rejected");
      }
      response = hub.card(fresh.accessToken(), login);
    }
    return switch (response.statusCode()) {
      case 200 -> Optional.of(Json.MAPPER.readTree(response.body()).path("card"));
      case 404 -> Optional.empty();
      default -> throw new IOException("the hub answered " + response.statusCode() + " to the card of " + login);
    };
  }
}
