package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.shine.server.client.CardChain;
import org.shine.server.client.CardKeys;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.util.Json;

/**
 * The cards of the user's contacts pinned on first sight (PROTOCOL §4 v3, "Clients"), kept next to the key file as
 * {@code <keyfile>.contacts.json} (mode 600, at most {@link #MAX} contacts, the one pinned longest ago dropped
 * first). A newer card a server serves replaces the pinned one only when the chain from it ({@code GetUserCard} since
 * the pinned place) follows ({@link CardChain}); anything else leaves the pinned card in use and a blocking warning.
 */
final class ContactCards {
  /** The most contacts kept; beyond it the one pinned longest ago is dropped (pinned anew on its next sight). */
  static final int MAX = 10_000;
  /** The most chain pages asked for one contact at once (64 cards each). */
  private static final int MAX_PAGES = 16;
  private final Path file;
  private final Map<String, Pin> pins = new ConcurrentHashMap<>();
  private final Object writing = new Object();

  /** A pinned card and when it was pinned. */
  private record Pin(JsonNode card, long seenAtMs) {
  }

  /**
   * What the client uses for a contact: the card (null when the server has none), and a warning when the served card
   * does not follow from the pinned one (the pinned card is then the one used).
   */
  record Judged(JsonNode card, String warning) {
    boolean blocked() {
      return warning != null;
    }

    /** The contact's X25519 encryption key as the card names it, or null. */
    String encryptionKeyB64() {
      return card != null && card.hasNonNull("encryptionKeyB64") ? card.get("encryptionKeyB64").asText() : null;
    }
  }

  private ContactCards(Path file) {
    this.file = file;
  }

  /** The blocking warning of PROTOCOL §4 v3, in its words. */
  static String changedWarning(String login) {
    return login + "'s keys changed in a way his devices did not sign";
  }

  /** The pins kept for the key file {@code keyFile} (none yet when the file does not exist). */
  static ContactCards of(Path keyFile) {
    Path file = keyFile.toAbsolutePath().resolveSibling(keyFile.getFileName() + ".contacts.json");
    ContactCards cards = new ContactCards(file);
    if (Files.exists(file)) {
      try {
        JsonNode root = Json.MAPPER.readTree(Files.readString(file));
        root.path("contacts").fields().forEachRemaining(entry -> cards.pins.put(entry.getKey(),
            new Pin(entry.getValue().path("card"), entry.getValue().path("seenAtMs").asLong())));
      } catch (IOException | RuntimeException e) {
        throw new CliFailure(CliFailure.BAD_KEY_FILE, "cannot read the pinned contact cards " + file + ": "
            + CliErrors.describe(e));
      }
    }
    return cards;
  }

  /** The pinned card of {@code login}, if any. */
  Optional<JsonNode> pinned(String login) {
    Pin pin = pins.get(login);
    return pin == null ? Optional.empty() : Optional.of(pin.card());
  }

  /** Forgets the pinned card of {@code login} (the user checked the new keys another way). */
  void forget(Vertx vertx, String login) {
    pins.remove(login);
    ClientSupport.await(vertx.executeBlocking(() -> {
      save();
      return null;
    }, false));
  }

  /**
   * The card to use for {@code login}: served, pinned on first sight, followed from the pin, or the pin with a warning.
   */
  Future<Judged> card(Vertx vertx, ShineClient client, String login) {
    return client.request("GetUserCard", ShineClient.object().put("login", login), ClientSupport.ANSWER_TIMEOUT_S
        * 1000).map(answer -> Optional.of(answer.path("card")))
        .recover(failure -> failure instanceof ShineClientException refused && refused.status() == 404
            ? Future.succeededFuture(Optional.empty()) : Future.failedFuture(failure))
        .compose(served -> served.isEmpty() ? Future.succeededFuture(pinnedOrNone(login))
            : judge(vertx, client, login, served.get()));
  }

  private Judged pinnedOrNone(String login) {
    Pin pin = pins.get(login);
    return new Judged(pin == null ? null : pin.card(), null);
  }

  private Future<Judged> judge(Vertx vertx, ShineClient client, String login, JsonNode served) {
    Pin pin = pins.get(login);
    if (pin == null) {
      return vertx.executeBlocking(() -> {
        if (CardKeys.of(login, served).problem() == null) {
          pin(login, served);
        }
        return new Judged(served, null);
      }, false);
    }
    if (CardChain.sameCard(pin.card(), served) || CardChain.isNewer(pin.card(), served)) {
      // the pinned card again, or an older one from a server that has not caught up: the pin stands
      return Future.succeededFuture(new Judged(pin.card(), null));
    }
    if (!CardChain.isNewer(served, pin.card())) {
      return Future.succeededFuture(new Judged(pin.card(), changedWarning(login)));
    }
    return chain(client, login, pin.card(), served, new ArrayList<>(), 0)
        .compose(chain -> vertx.executeBlocking(() -> {
          if (CardChain.problem(pin.card(), chain).isPresent()) {
            return new Judged(pin.card(), changedWarning(login));
          }
          JsonNode last = chain.get(chain.size() - 1);
          pin(login, last);
          return new Judged(last, null);
        }, false))
        .recover(failure -> failure instanceof ShineClientException
            ? Future.succeededFuture(new Judged(pin.card(), changedWarning(login))) : Future.failedFuture(failure));
  }

  /** The cards after {@code from} up to {@code served}, page by page (a server serves at most 64 at once). */
  private Future<List<JsonNode>> chain(ShineClient client, String login, JsonNode from, JsonNode served,
      List<JsonNode> collected, int pages) {
    ObjectNode ask = ShineClient.object().put("login", login).put("sinceEpoch", from.path("epoch").asLong(0))
        .put("sinceVersion", from.path("version").asLong());
    return client.request("GetUserCard", ask, ClientSupport.ANSWER_TIMEOUT_S * 1000).compose(answer -> {
      List<JsonNode> page = new ArrayList<>();
      answer.path("chain").forEach(page::add);
      collected.addAll(page);
      if (page.isEmpty() || !CardChain.isNewer(served, page.get(page.size() - 1)) || pages + 1 >= MAX_PAGES) {
        return Future.succeededFuture(collected);
      }
      return chain(client, login, page.get(page.size() - 1), served, collected, pages + 1);
    });
  }

  /** Pins a card and writes the file: on a worker thread (file I/O). */
  private void pin(String login, JsonNode card) {
    pins.put(login, new Pin(card, System.currentTimeMillis()));
    while (pins.size() > MAX) {
      pins.entrySet().stream().min((a, b) -> Long.compare(a.getValue().seenAtMs(), b.getValue().seenAtMs()))
          .ifPresent(oldest -> pins.remove(oldest.getKey(), oldest.getValue()));
    }
    save();
  }

  private void save() {
    synchronized (writing) {
      ObjectNode root = Json.MAPPER.createObjectNode().put("format", 1);
      ObjectNode contacts = root.putObject("contacts");
      pins.forEach((login, pin) -> contacts.putObject(login).put("seenAtMs", pin.seenAtMs()).set("card", pin.card()));
      Path next = file.resolveSibling(file.getFileName() + ".new");
      try {
        Files.deleteIfExists(next);
        try {
          Files.createFile(next, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException e) {
          Files.createFile(next);
        }
        Files.writeString(next, Json.MAPPER.writeValueAsString(root));
        Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write " + file, e);
      }
    }
  }
}
