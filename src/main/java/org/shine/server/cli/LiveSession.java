package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.Objects;
import java.util.function.Consumer;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;

/**
 * A logged-in session that outlives its connection: when the server goes away it says "connection lost" (to {@code
 * notices}: stderr for {@code listen}, the screen for {@code chat}) and reconnects with a capped backoff, logs in
 * again and says "reconnected". A login refused on reconnection (the
 * user's card changed, say) ends it: {@link #ended()} fails with the reason.
 */
final class LiveSession {
  private static final long FIRST_DELAY_MS = 500;
  private static final long MAX_DELAY_MS = 5_000;
  private final Vertx vertx;
  private final String url;
  private final ClientSupport.Identity user;
  private final Consumer<String> notices;
  private final Consumer<JsonNode> onEvent;
  private final Runnable onReconnected;
  private final boolean reconnect;
  private final Promise<Void> ended = Promise.promise();
  private volatile ShineClient current;
  private volatile boolean closing;

  LiveSession(Vertx vertx, String url, ClientSupport.Identity user, Consumer<String> notices, boolean reconnect,
      Consumer<JsonNode> onEvent, Runnable onReconnected) {
    this.vertx = Objects.requireNonNull(vertx);
    this.url = Objects.requireNonNull(url);
    this.user = Objects.requireNonNull(user);
    this.notices = Objects.requireNonNull(notices);
    this.reconnect = reconnect;
    this.onEvent = Objects.requireNonNull(onEvent);
    this.onReconnected = Objects.requireNonNull(onReconnected);
  }

  /** Connects and logs in for the first time; failures are the command's ({@link CliFailure}). */
  LiveSession open() {
    attach(ClientSupport.loggedIn(vertx, url, user));
    return this;
  }

  /** The connection now (it changes on reconnection). */
  ShineClient client() {
    return current;
  }

  /** Fails when the session cannot go on (no reconnection wanted, or a login refused); never succeeds. */
  io.vertx.core.Future<Void> ended() {
    return ended.future();
  }

  void close() {
    closing = true;
    ShineClient client = current;
    if (client != null) {
      ClientSupport.await(client.close().recover(failure -> io.vertx.core.Future.succeededFuture()));
    }
  }

  private void attach(ShineClient client) {
    current = client;
    client.onEvent(onEvent);
    client.onClose(this::lost);
  }

  private void lost() {
    if (closing) {
      return;
    }
    if (!reconnect) {
      notices.accept("connection lost to " + url);
      ended.tryFail(new CliFailure(CliFailure.UNREACHABLE, "connection lost to " + url));
      return;
    }
    notices.accept("connection lost to " + url + "; reconnecting");
    retry(FIRST_DELAY_MS);
  }

  private void retry(long delayMs) {
    vertx.setTimer(delayMs, id -> {
      if (closing) {
        return;
      }
      ShineClient.connect(vertx, url)
          .compose(client -> client.login(user.login(), user.key()).map(client)
              .onFailure(failure -> client.close()))
          .onSuccess(client -> {
            attach(client);
            notices.accept("reconnected to " + url);
            onReconnected.run();
          })
          .onFailure(failure -> {
            if (failure instanceof ShineClientException refused && refused.status() != 0) {
              ended.tryFail(ClientSupport.loginRefused(url, user.login(), refused));
            } else {
              retry(Math.min(MAX_DELAY_MS, delayMs * 2));
            }
          });
    });
  }
}
