package org.shine.server.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.shine.server.client.ContainerVerifier;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.client.Verdict;
import org.shine.server.dm.DmKeys;
import org.shine.server.dm.KeyFile;

/**
 * What every client subcommand does first — read the key, connect, log in — with each way it can fail turned into a
 * {@link CliFailure} that names the file or the server and the likely fix.
 */
final class ClientSupport {
  /** How long a command waits for a connection or an answer before it reports the server unreachable. */
  static final long ANSWER_TIMEOUT_S = 30;

  private ClientSupport() {
  }

  /** A user: the login and its key. */
  record Identity(String login, KeyFile key) {
  }

  static Identity identity(Path keyFile, String login) {
    KeyFile key = readKey(keyFile);
    String who = login != null ? login : key.login().orElse(null);
    if (who == null) {
      throw CliFailure.usage("--login is needed: " + keyFile + " names no login");
    }
    return new Identity(who, key);
  }

  static KeyFile readKey(Path file) {
    try {
      return KeyFile.read(file);
    } catch (NoSuchFileException e) {
      throw new CliFailure(CliFailure.BAD_KEY_FILE, "key file " + file + " does not exist (make one with: keygen"
          + " --out " + file + " --login LOGIN)");
    } catch (JsonProcessingException e) {
      throw notAKeyFile(file);
    } catch (IOException e) {
      throw new CliFailure(CliFailure.BAD_KEY_FILE, "cannot read key file " + file + ": " + CliErrors.describe(e));
    } catch (RuntimeException e) {
      throw notAKeyFile(file);
    }
  }

  private static CliFailure notAKeyFile(Path file) {
    return new CliFailure(CliFailure.BAD_KEY_FILE, file + " is not a key file: expected the JSON that keygen writes"
        + " (publicKeyB64, privateKeyB64 of an Ed25519 key, login)");
  }

  /** A connection to {@code url}; an unreachable server is {@link CliFailure#UNREACHABLE}. */
  static ShineClient connect(Vertx vertx, String url) {
    if (!url.startsWith("ws://") && !url.startsWith("wss://")) {
      throw CliFailure.usage("--server takes the server's WebSocket URL, such as ws://127.0.0.1:7101/ws: " + url);
    }
    try {
      return ShineClient.connect(vertx, url).await(ANSWER_TIMEOUT_S, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new CliFailure(CliFailure.UNREACHABLE, "cannot reach " + url + ": no connection within "
          + ANSWER_TIMEOUT_S + " s");
    } catch (Exception e) { // Future.await rethrows a checked failure (ConnectException) as it is
      throw new CliFailure(CliFailure.UNREACHABLE, "cannot reach " + url + ": " + CliErrors.describe(e));
    }
  }

  /** A connection to {@code url} logged in as {@code user}; a refused login says why. */
  static ShineClient loggedIn(Vertx vertx, String url, Identity user) {
    ShineClient client = connect(vertx, url);
    try {
      client.login(user.login(), user.key()).await(ANSWER_TIMEOUT_S, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new CliFailure(CliFailure.UNREACHABLE, url + " did not answer the login within " + ANSWER_TIMEOUT_S
          + " s");
    } catch (ShineClientException e) {
      throw loginRefused(url, user.login(), e);
    }
    return client;
  }

  /** Why a login was refused, as the user can act on it. */
  static CliFailure loginRefused(String url, String login, ShineClientException e) {
    return switch (e.status()) {
      case 404 -> new CliFailure(CliFailure.NOT_FOUND, login + " is not registered on " + url
          + " (client register --key FILE --server " + url + ")");
      case 401 -> new CliFailure(CliFailure.LOGIN_REFUSED, url + " refused the login of " + login
          + ": the key does not match the key " + login + " registered");
      case 421 -> new CliFailure(CliFailure.LOGIN_REFUSED, url + " is not an access server of " + login
          + " (its card names other servers)");
      default -> CliErrors.fromServer(e);
    };
  }

  /** The answer of a request; an error answer becomes its {@link CliFailure}, silence {@code UNREACHABLE}. */
  static <T> T await(Future<T> answer) {
    try {
      return answer.await(ANSWER_TIMEOUT_S, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new CliFailure(CliFailure.UNREACHABLE, "no answer from the server within " + ANSWER_TIMEOUT_S + " s");
    }
  }

  /**
   * The check of what {@code me} receives (PROTOCOL §13): authors' cards read with {@code GetUserCard} on the
   * connection {@code connection} gives at the time (a live session's changes when it reconnects) through the pinned
   * cards ({@link ContactCards}: a card that does not follow from the pinned one is not used), signatures checked on
   * worker threads.
   */
  static ContainerVerifier verifier(Vertx vertx, String me, Supplier<ShineClient> connection,
      ContactCards contacts) {
    return ContainerVerifier.onWorkers(vertx, me, login -> contacts.card(vertx, connection.get(), login)
        .map(judged -> Optional.ofNullable(judged.card())));
  }

  /** The card the server serves for {@code login}, or null when it has none (404). */
  static JsonNode servedCard(ShineClient client, String login) {
    try {
      return await(client.request("GetUserCard", ShineClient.object().put("login", login))).path("card");
    } catch (ShineClientException e) {
      if (e.status() == 404) {
        return null;
      }
      throw e;
    }
  }

  /** A message of a history page and what its check against the author's card found. */
  record Checked(JsonNode entry, Verdict verdict) {
  }

  /** The newest {@code limit} messages with {@code peer} (at most 200), oldest first, each checked. */
  static List<Checked> history(ShineClient client, ContainerVerifier verifier, String peer, int limit) {
    JsonNode page = await(client.request("GetDirectMessages",
        ShineClient.object().put("peer", peer).put("limit", Math.max(1, Math.min(200, limit)))));
    List<JsonNode> entries = new ArrayList<>();
    page.path("messages").forEach(entries::add);
    Collections.reverse(entries);
    List<Verdict> verdicts = await(Future.all(entries.stream().map(verifier::historyEntry).toList())
        .map(all -> all.<Verdict>list()));
    List<Checked> checked = new ArrayList<>(entries.size());
    for (int i = 0; i < entries.size(); i++) {
      checked.add(new Checked(entries.get(i), verdicts.get(i)));
    }
    return checked;
  }

  /** A baseKey, or the messageKey of one of its copies, split into its parts. */
  static DmKeys.ParsedKey messageKey(String key) {
    DmKeys.ParsedKey parsed = DmKeys.parseBaseKey(key);
    if (parsed == null) {
      parsed = DmKeys.parseMessageKey(key);
    }
    if (parsed == null) {
      throw CliFailure.usage("--message takes a message key as history prints it (from|to|createdAtMs|nonce): "
          + key);
    }
    return parsed;
  }

  /** Closes a Vert.x instance a command made, without waiting longer than it must. */
  static void close(Vertx vertx) {
    try {
      vertx.close().await(10, TimeUnit.SECONDS);
    } catch (TimeoutException | RuntimeException e) {
      // the command's result is already printed; a slow close must not change its exit code
    }
  }
}
