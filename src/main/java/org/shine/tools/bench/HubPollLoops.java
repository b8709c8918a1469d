package org.shine.tools.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * Hub users' long polls held by the load generator as a crowd of adapters would: each user polls again as soon as
 * its poll ends (408 after {@code waitS}, or 200 with an event, which it acks first), over one keep-alive connection
 * of its own. The wake-up latency of an event whose send was noted ({@link #sending}) is recorded on its 200.
 */
final class HubPollLoops implements AutoCloseable {
  /** The wait each poll asks for (the server caps it at {@code hub.maxWaitS}). */
  static final int WAIT_S = 30;
  private static final long RETRY_MS = 1_000;
  private final Vertx vertx;
  private final HttpClientAgent client;
  private final String hubUrl;
  private final Map<String, Long> sentAt = new ConcurrentHashMap<>();
  private final AtomicReference<Histogram> woken = new AtomicReference<>(new ConcurrentHistogram(3));
  /** Polls sent and not answered yet. */
  final AtomicLong held = new AtomicLong();
  /** Polls that failed or got an unexpected status (each is tried again a second later). */
  final AtomicLong errors = new AtomicLong();
  private volatile boolean on = true;

  /** {@code hubUrl}: {@code http://host:port/hub/v1}; room for {@code users} connections. */
  HubPollLoops(Vertx vertx, String hubUrl, int users) {
    this.vertx = vertx;
    this.hubUrl = hubUrl;
    this.client = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true).setIdleTimeout(0)
        .setConnectTimeout(30_000), new PoolOptions().setHttp1MaxSize(users + 16).setMaxWaitQueueSize(-1));
  }

  /** Starts the poll loop of {@code login} with access token {@code token}. */
  void start(String login, String token) {
    poll(login, token);
  }

  /** The event for {@code login} is being sent now: its wake-up latency is recorded when a poll hands it out. */
  void sending(String login) {
    sentAt.put(login, System.nanoTime());
  }

  /** The wake-up latencies (µs) recorded since the last call. */
  Histogram takeWoken() {
    return woken.getAndSet(new ConcurrentHistogram(3));
  }

  private void poll(String login, String token) {
    if (!on) {
      return;
    }
    held.incrementAndGet();
    request(HttpMethod.GET, "/messages?waitS=" + WAIT_S, token).onComplete(ar -> {
      held.decrementAndGet();
      if (ar.failed()) {
        retryLater(login, token);
        return;
      }
      HttpClientResponse response = ar.result();
      switch (response.statusCode()) {
        case 200 -> {
          Long at = sentAt.remove(login);
          if (at != null) {
            woken.get().recordValue(Math.max(1, (System.nanoTime() - at) / 1_000));
          }
          request(HttpMethod.POST, "/ack/" + response.getHeader("X-Delivery-Id"), token)
              .onComplete(ack -> poll(login, token));
        }
        case 204, 408 -> poll(login, token);
        default -> retryLater(login, token);
      }
    });
  }

  private void retryLater(String login, String token) {
    errors.incrementAndGet();
    if (on) {
      vertx.setTimer(RETRY_MS, id -> poll(login, token));
    }
  }

  /** One request whose body is read to the end (so the connection can serve the next one). */
  private Future<HttpClientResponse> request(HttpMethod method, String path, String token) {
    return client.request(new RequestOptions().setMethod(method).setAbsoluteURI(hubUrl + path)
            .putHeader("Authorization", "Bearer " + token).setIdleTimeout((WAIT_S + 30) * 1000L))
        .compose(request -> request.send().compose(response -> response.body().map(body -> response)));
  }

  @Override
  public void close() {
    on = false;
    client.close().await();
  }
}
