package org.shine.server.sync;

import io.vertx.core.Future;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.shine.server.db.SyncRepository.Sibling;

/**
 * What one pull run from one sibling remembers while it walks the pages: whether each owner is routed to both
 * servers (asked once per run), and the card refreshes of authors whose items failed their signature check — one
 * per author, at most {@value #MAX_CARD_REFRESHES} per run, so a sibling serving forged items cannot make this server
 * call around without end. Confined to the puller's event loop.
 */
final class PullRun {
  static final int MAX_CARD_REFRESHES = 16;
  private static final int MAX_OWNERS_REMEMBERED = 10_000;
  private final Sibling sibling;
  private final Map<String, Future<Boolean>> sharedOwners = new HashMap<>();
  private final Map<String, Future<Boolean>> refreshes = new HashMap<>();

  PullRun(Sibling sibling) {
    this.sibling = Objects.requireNonNull(sibling);
  }

  Sibling sibling() {
    return sibling;
  }

  /** Whether {@code owner} is routed to both servers, as {@code ask} answers it the first time in this run. */
  Future<Boolean> sharedOwner(String owner, Function<String, Future<Boolean>> ask) {
    Future<Boolean> known = sharedOwners.get(owner);
    if (known != null) {
      return known;
    }
    Future<Boolean> answer = ask.apply(owner);
    if (sharedOwners.size() < MAX_OWNERS_REMEMBERED) {
      sharedOwners.put(owner, answer);
    }
    return answer;
  }

  /**
   * The refresh of {@code author}'s card in this run ({@code refresh} runs once per author); empty when this run
   * has used its refreshes.
   */
  Optional<Future<Boolean>> refreshOnce(String author, Function<String, Future<Boolean>> refresh) {
    Future<Boolean> running = refreshes.get(author);
    if (running != null) {
      return Optional.of(running);
    }
    if (refreshes.size() >= MAX_CARD_REFRESHES) {
      return Optional.empty();
    }
    Future<Boolean> started = refresh.apply(author);
    refreshes.put(author, started);
    return Optional.of(started);
  }
}
