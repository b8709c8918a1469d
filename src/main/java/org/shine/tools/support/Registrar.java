package org.shine.tools.support;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.KeyFile;

/**
 * Registers the users of a load generator as a server's admission wants them (PROTOCOL §13): each card is published
 * on the servers it names only (under {@code directory.registration} {@code served} another server refuses it; its
 * servers relay it to their peers, {@link #awaitKnown}), and from loopback source addresses in turn,
 * {@value #CARDS_PER_ADDRESS} cards each, so that no address passes {@code limits.cardsPerIpPerMin} (30 a minute).
 * The servers must listen on loopback, as every server this project's tools start does.
 */
public final class Registrar implements AutoCloseable {
  /** Cards published from one source address (below the default {@code limits.cardsPerIpPerMin}). */
  static final int CARDS_PER_ADDRESS = 25;
  /** The loopback source addresses taken in turn: 127.1.0.1 to 127.1.249.250. */
  private static final long ADDRESSES = 250L * 250;
  private static final long POLL_MS = 50;
  /** Publishes in flight in {@link #publishAll}. */
  private static final int WINDOW = 32;
  private final Vertx vertx;
  private final Map<String, ShineClient> clients = new LinkedHashMap<>();
  private final Map<String, List<String>> logins = new LinkedHashMap<>();
  /**
   * Cards published so far, counted from a random start: a second load generator run within the same minute (a
   * {@code --warm} benchmark, a soak round) takes other source addresses than the first.
   */
  private final AtomicLong published = new AtomicLong(
      ThreadLocalRandom.current().nextLong(ADDRESSES) * CARDS_PER_ADDRESS);

  public Registrar(Vertx vertx) {
    this.vertx = vertx;
  }

  /**
   * Publishes {@code login}'s card (version 1, {@code routes}: serverLogin → URL) on each of {@code publishOn}: the
   * URLs to reach the servers the card names (usually the routes' own URLs).
   */
  public Future<Void> publish(String login, KeyFile key, List<Map.Entry<String, String>> routes,
      List<String> publishOn) {
    List<Future<?>> answers = new ArrayList<>();
    for (String url : publishOn) {
      answers.add(client(url).publishCard(login, key, routes, 1));
      logins.computeIfAbsent(url, u -> new ArrayList<>()).add(login);
    }
    return Future.all(answers).mapEmpty();
  }

  /** As {@link #publish(String, KeyFile, List, List)} on the routes' own URLs. */
  public Future<Void> publish(String login, KeyFile key, List<Map.Entry<String, String>> routes) {
    return publish(login, key, routes, routes.stream().map(Map.Entry::getValue).distinct().toList());
  }

  /**
   * Publishes the card of every key (its login, version 1, {@code routes}) as {@link #publish(String, KeyFile, List)}
   * does, {@value #WINDOW} at a time, counting each in {@code published}; for the tools that register thousands.
   */
  public void publishAll(List<KeyFile> keys, List<Map.Entry<String, String>> routes, AtomicLong published) {
    List<Future<Void>> window = new ArrayList<>();
    for (KeyFile key : keys) {
      window.add(publish(key.login().orElseThrow(), key, routes).onSuccess(v -> published.incrementAndGet()));
      if (window.size() == WINDOW) {
        Future.all(window).await();
        window.clear();
      }
    }
    Future.all(window).await();
  }

  /**
   * Waits until each server of {@code urls} holds every card published so far (those it did not take itself come by
   * relay from the servers they name); fails after {@code timeoutMs}.
   */
  public void awaitKnown(List<String> urls, long timeoutMs) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    List<String> all = logins.values().stream().flatMap(List::stream).distinct().toList();
    for (String url : urls) {
      ShineClient client = ShineClient.connect(vertx, url).await();
      try {
        for (String login : all) {
          if (logins.getOrDefault(url, List.of()).contains(login)) {
            continue;
          }
          while (client.request("GetUserCard", ShineClient.object().put("login", login)).otherwiseEmpty().await()
              == null) {
            if (System.nanoTime() > deadline) {
            throw new IllegalStateException(url + " has not received the card of " + login + " by relay within "
                  + timeoutMs + " ms (are the servers each other's peers?)");
            }
            sleep();
          }
        }
      } finally {
        client.close();
      }
    }
  }

  /** A connection to {@code url} from the source address of the next card. */
  private ShineClient client(String url) {
    long n = published.getAndIncrement() / CARDS_PER_ADDRESS;
    String address = "127.1." + (n / 250 % 250) + "." + (n % 250 + 1);
    return clients.computeIfAbsent(url + " " + address,
        key -> ShineClient.connectFrom(vertx, url, address).await());
  }

  private static void sleep() {
    try {
      Thread.sleep(POLL_MS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for a card", e);
    }
  }

  @Override
  public void close() {
    clients.values().forEach(ShineClient::close);
    clients.clear();
  }
}
