package org.shine.server.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.Base64;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmFormatException;
import org.shine.server.dm.DmKind;

/**
 * A client's check of what its server hands it (PROTOCOL §13 "Clients verify"): every container is verified against
 * its author's card key before it is shown, and must concern the user it was handed to; events and history entries
 * must say what their container says. Cards come from a {@link CardSource} (the server's {@code GetUserCard}, the
 * hub's card route) and are kept per process, at most {@code capacity} of them, the least recently used dropped
 * first; a container that does not verify with a kept card is checked once more against a card read anew (its author
 * may have a newer one). Signature checks run on Vert.x worker threads ({@link #onWorkers}), never on an event loop,
 * or on the caller's own thread when it has no event loop to spare ({@link #inline}, the adapter's threads).
 */
public final class ContainerVerifier {
  /** Cards kept per process by default. */
  public static final int DEFAULT_CAPACITY = 1_000;
  private final String me;
  private final CardSource cards;
  private final Vertx workers;
  private final int capacity;
  private final Map<String, Entry> kept = new ConcurrentHashMap<>();
  private final AtomicLong uses = new AtomicLong();

  /** Where cards come from: the card JSON of a login, empty when the server has no card for it. */
  @FunctionalInterface
  public interface CardSource {
    Future<Optional<JsonNode>> card(String login);
  }

  ContainerVerifier(String me, CardSource cards, Vertx workers, int capacity) {
    this.me = Objects.requireNonNull(me);
    this.cards = Objects.requireNonNull(cards);
    this.workers = workers;
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive");
    }
    this.capacity = capacity;
  }

  /** For {@code me}, checking signatures on {@code vertx}'s worker threads. */
  public static ContainerVerifier onWorkers(Vertx vertx, String me, CardSource cards) {
    return new ContainerVerifier(me, cards, Objects.requireNonNull(vertx), DEFAULT_CAPACITY);
  }

  /** For {@code me}, checking signatures on the caller's thread (never an event loop's). */
  public static ContainerVerifier inline(String me, CardSource cards) {
    return new ContainerVerifier(me, cards, null, DEFAULT_CAPACITY);
  }

  /** Cards kept now. */
  public int cardsKept() {
    return kept.size();
  }

  /**
   * A server event as PROTOCOL §5 pushes it ({@code op} + {@code payload}): the container of an
   * {@code IncomingDirectMessage} or {@code OutgoingDirectMessage}, the receipt of a {@code DmReadReceipt} that carries
   * one; {@link Verdict#NO_CONTAINER} for the others.
   */
  public Future<Verdict> event(JsonNode event) {
    JsonNode payload = event.path("payload");
    return switch (event.path("op").asText()) {
      case "IncomingDirectMessage" -> copy(payload.path("blobB64").asText(null), DmKind.INCOMING, payload);
      case "OutgoingDirectMessage" -> copy(payload.path("blobB64").asText(null), DmKind.OUTGOING, payload);
      case "DmReadReceipt" -> payload.has("receiptBlobB64") ? receipt(payload) : Future.succeededFuture(
          Verdict.NO_CONTAINER);
      default -> Future.succeededFuture(Verdict.NO_CONTAINER);
    };
  }

  /** One entry of a {@code GetDirectMessages} page: its copy, the direction it claims, its keys. */
  public Future<Verdict> historyEntry(JsonNode entry) {
    DmKind kind = "outgoing".equals(entry.path("direction").asText()) ? DmKind.OUTGOING : DmKind.INCOMING;
    return copy(entry.path("blobB64").asText(null), kind, entry);
  }

  /** A container in base64 that must be its author's alone (the last message of a chat list, say). */
  public Future<Verdict> blob(String blobB64) {
    DmContainer container = parse(blobB64);
    if (container == null) {
      return Future.succeededFuture(Verdict.notVerified("unreadable container"));
    }
    Verdict addressed = addressed(container);
    return addressed != null ? Future.succeededFuture(addressed) : signature(container);
  }

  /**
   * Whether the author's card key signs {@code container}: the kept card first, then, when it does not verify, a
   * card read anew.
   */
  public Future<Verdict> signature(DmContainer container) {
    String author = container.from();
    Entry first = lookup(author);
    return check(container, first).compose(verdict -> {
      if (verdict.outcome() != Verdict.Outcome.NOT_VERIFIED || first.readForThisCall) {
        return Future.succeededFuture(verdict);
      }
      return check(container, reread(author, first));
    });
  }

  private Future<Verdict> copy(String blobB64, DmKind kind, JsonNode claims) {
    DmContainer container = parse(blobB64);
    if (container == null) {
      return Future.succeededFuture(Verdict.notVerified("unreadable container"));
    }
    if (container.kind() != kind || !claimed(claims, "messageKey", container.messageKey())
        || !claimed(claims, "baseKey", container.baseKey())) {
      return Future.succeededFuture(Verdict.notVerified("the server's description does not match the container"));
    }
    Verdict addressed = addressed(container);
    return addressed != null ? Future.succeededFuture(addressed) : signature(container);
  }

  private Future<Verdict> receipt(JsonNode payload) {
    DmContainer receipt = parse(payload.path("receiptBlobB64").asText(null));
    if (receipt == null) {
      return Future.succeededFuture(Verdict.notVerified("unreadable container"));
    }
    if (receipt.kind() != DmKind.READ_RECEIPT || !claimed(payload, "baseKey", receipt.ref())
        || !claimed(payload, "readerLogin", receipt.from())
        || payload.has("readAtMs") && payload.get("readAtMs").asLong() != receipt.createdAtMs()) {
      return Future.succeededFuture(Verdict.notVerified("the server's description does not match the receipt"));
    }
    Verdict addressed = addressed(receipt);
    return addressed != null ? Future.succeededFuture(addressed) : signature(receipt);
  }

  /** Null when the container is the user's: a copy it owns, a message or receipt sent to it. */
  private Verdict addressed(DmContainer container) {
    boolean mine = switch (container.kind()) {
      case INCOMING, READ_RECEIPT -> container.to().equals(me);
      case OUTGOING, TOMBSTONE -> container.from().equals(me);
    };
    return mine ? null : Verdict.notVerified("not addressed to " + me + " (" + container.from() + " → "
        + container.to() + ")");
  }

  private static boolean claimed(JsonNode claims, String field, String actual) {
    return !claims.has(field) || actual.equals(claims.get(field).asText());
  }

  private static DmContainer parse(String blobB64) {
    if (blobB64 == null) {
      return null;
    }
    try {
      return DmCodec.parse(Base64.getDecoder().decode(blobB64));
    } catch (DmFormatException | IllegalArgumentException e) {
      return null;
    }
  }

  private Future<Verdict> check(DmContainer container, Entry entry) {
    String author = container.from();
    return entry.keys.compose(keys -> {
      if (keys.problem() != null) {
        return Future.succeededFuture(Verdict.notVerified(keys.problem()));
      }
      return work(() -> keys.keys().stream().anyMatch(container::verifySignature)).map(valid -> valid
          ? Verdict.VERIFIED : Verdict.notVerified("signature does not match " + author + "'s key"))
          .otherwise(failure -> Verdict.unchecked("the signature could not be checked: " + failure));
    }, failure -> Future.succeededFuture(Verdict.unchecked(author + "'s card could not be read: "
        + failure.getMessage())));
  }

  /** The kept card of {@code login}, or a read of it started now (and kept). */
  private Entry lookup(String login) {
    Entry found = kept.get(login);
    if (found != null) {
      found.used(uses.incrementAndGet());
      return found.reused();
    }
    Entry started = new Entry(read(login), uses.incrementAndGet(), true);
    Entry raced = kept.putIfAbsent(login, started);
    if (raced != null) {
      return raced.reused();
    }
    keep(login, started);
    return started;
  }

  /** A card read anew in place of {@code stale}, unless another caller already did so. */
  private Entry reread(String login, Entry stale) {
    Entry now = kept.get(login);
    if (now != null && now.keys != stale.keys) {
      return now;
    }
    Entry started = new Entry(read(login), uses.incrementAndGet(), true);
    boolean placed = now == null ? kept.putIfAbsent(login, started) == null : kept.replace(login, now, started);
    if (placed) {
      keep(login, started);
    }
    return started;
  }

  /** Bounds the kept cards (least recently used out first) and forgets a read that failed, to try again later. */
  private void keep(String login, Entry entry) {
    entry.keys.onFailure(failure -> kept.remove(login, entry));
    while (kept.size() > capacity) {
      kept.entrySet().stream().min((a, b) -> Long.compare(a.getValue().lastUse.get(), b.getValue().lastUse.get()))
          .ifPresent(oldest -> kept.remove(oldest.getKey(), oldest.getValue()));
    }
  }

  private Future<CardKeys.Keys> read(String login) {
    Future<Optional<JsonNode>> card;
    try {
      card = cards.card(login);
    } catch (RuntimeException e) {
      card = Future.failedFuture(e);
    }
    return card.compose(found -> found.isEmpty()
        ? Future.succeededFuture(CardKeys.Keys.unusable(login, login + " has no card on this server"))
        : work(() -> CardKeys.of(login, found.get())));
  }

  private <T> Future<T> work(Callable<T> task) {
    if (workers != null) {
      return workers.executeBlocking(task, false);
    }
    try {
      return Future.succeededFuture(task.call());
    } catch (Exception e) {
      return Future.failedFuture(e);
    }
  }

  /** A kept card: its keys (a read that may still run), when it was last used, and whether this call read it. */
  private static final class Entry {
    final Future<CardKeys.Keys> keys;
    final AtomicLong lastUse;
    final boolean readForThisCall;

    Entry(Future<CardKeys.Keys> keys, long use, boolean readForThisCall) {
      this(keys, new AtomicLong(use), readForThisCall);
    }

    private Entry(Future<CardKeys.Keys> keys, AtomicLong lastUse, boolean readForThisCall) {
      this.keys = keys;
      this.lastUse = lastUse;
      this.readForThisCall = readForThisCall;
    }

    void used(long use) {
      lastUse.accumulateAndGet(use, Math::max);
    }

    /** The same card as seen by a later call, which did not read it. */
    Entry reused() {
      return new Entry(keys, lastUse, false);
    }
  }
}
