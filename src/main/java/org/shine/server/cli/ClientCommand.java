package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import org.shine.server.dm.KeyFile;
import org.shine.server.client.Resender;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.client.ShineClientException;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmFormatException;

/** {@code client register|send|history|listen}: try a server from the shell. */
public final class ClientCommand {
  static final String USAGE = String.join("\n",
      "client register --key FILE [--login L] --server URL [--server URL2] [--version N]",
      "       publish a signed card naming 1-2 access servers (each URL is asked for its serverLogin)",
      "client send     --key FILE [--login L] --server URL --to LOGIN --text TEXT",
      "client history  --key FILE [--login L] --server URL --peer LOGIN [--limit N]",
      "client listen   --key FILE [--login L] --server URL      print events, one JSON line each");
  private static final Set<String> OPTIONS = Set.of("key", "login", "server", "version", "to", "text", "peer",
      "limit");

  private ClientCommand() {
  }

  public static int run(String[] args) {
    if (args.length == 0 || args[0].equals("help")) {
      System.out.println(USAGE);
      return args.length == 0 ? 2 : 0;
    }
    Args options = Args.parse(args, 1, OPTIONS);
    KeyFile key;
    try {
      key = KeyFile.read(Path.of(options.required("key")));
    } catch (IOException | RuntimeException e) {
      System.err.println("error: cannot read key file: " + e.getMessage());
      return 1;
    }
    String login = options.optional("login", key.login().orElse(null));
    if (login == null) {
      throw new Args.UsageException("--login is required when the key file names no login");
    }
    Vertx vertx = Vertx.vertx();
    try {
      return switch (args[0]) {
        case "register" -> register(vertx, options, login, key);
        case "send" -> send(vertx, options, login, key);
        case "history" -> history(vertx, options, login, key);
        case "listen" -> listen(vertx, options, login, key);
        default -> throw new Args.UsageException("unknown client command " + args[0] + "\n" + USAGE);
      };
    } catch (ShineClientException e) {
      System.err.println("error: " + e.getMessage());
      return 1;
    } catch (RuntimeException e) {
      if (e instanceof Args.UsageException usage) {
        throw usage;
      }
      System.err.println("error: " + e.getMessage());
      return 1;
    } finally {
      vertx.close();
    }
  }

  private static int register(Vertx vertx, Args options, String login, KeyFile key) {
    List<String> urls = options.all("server");
    if (urls.isEmpty() || urls.size() > 2) {
      throw new Args.UsageException("register takes one or two --server URLs");
    }
    List<Map.Entry<String, String>> routes = new ArrayList<>();
    List<ShineClient> clients = new ArrayList<>();
    for (String url : urls) {
      ShineClient client = ShineClient.connect(vertx, url).await();
      clients.add(client);
      routes.add(Map.entry(client.serverLogin(login).await(), url));
    }
    long version = options.longValue("version", nextVersion(clients.get(0), login));
    for (ShineClient client : clients) {
      JsonNode result = client.publishCard(login, key, routes, version).await();
      System.out.println(result);
    }
    return 0;
  }

  private static long nextVersion(ShineClient client, String login) {
    try {
      return client.request("GetUserCard", ShineClient.object().put("login", login)).await()
          .path("card").path("version").asLong() + 1;
    } catch (ShineClientException e) {
      if (e.status() == 404) {
        return 1;
      }
      throw e;
    }
  }

  private static ShineClient loggedIn(Vertx vertx, Args options, String login, KeyFile key) {
    ShineClient client = ShineClient.connect(vertx, options.required("server")).await();
    client.login(login, key).await();
    return client;
  }

  /**
   * Signs the pair once and sends those bytes until the server answers: after a 503, a 500, a 429, a timeout or a
   * lost connection the same bytes go again (reconnecting if needed), never a new nonce, so a send that was stored
   * before its answer was lost is answered from what is stored instead of becoming a second message.
   */
  private static int send(Vertx vertx, Args options, String login, KeyFile key) {
    String url = options.required("server");
    ShineClient first = loggedIn(vertx, options, login, key);
    SignedPair pair = ShineClient.signPair(login, key, options.required("to"), System.currentTimeMillis(),
        ShineClient.randomNonce(), 0, options.required("text").getBytes(StandardCharsets.UTF_8));
    Resender resender = new Resender(vertx, first, () -> ShineClient.connect(vertx, url)
        .compose(client -> client.login(login, key).map(client)), Resender.Policy.DEFAULT);
    JsonNode result = resender.sendPair(pair).await();
    System.out.println(result);
    return 0;
  }

  private static int history(Vertx vertx, Args options, String login, KeyFile key) {
    ShineClient client = loggedIn(vertx, options, login, key);
    ObjectNode query = ShineClient.object().put("peer", options.required("peer"))
        .put("limit", options.longValue("limit", 50));
    JsonNode page = client.request("GetDirectMessages", query).await();
    for (JsonNode message : page.path("messages")) {
      System.out.println(describe(message));
    }
    return 0;
  }

  private static int listen(Vertx vertx, Args options, String login, KeyFile key) {
    ShineClient client = loggedIn(vertx, options, login, key);
    CountDownLatch closed = new CountDownLatch(1);
    client.onEvent(event -> {
      if (event.path("payload").has("blobB64")) {
        ((ObjectNode) event.get("payload")).put("text", bodyText(event.get("payload").get("blobB64").asText()));
      }
      System.out.println(event);
      System.out.flush();
    });
    System.err.println("listening as " + login + " (Ctrl-C to stop)");
    Runtime.getRuntime().addShutdownHook(new Thread(closed::countDown));
    try {
      closed.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return 0;
  }

  private static String describe(JsonNode message) {
    String state = message.has("deliveryState") ? message.get("deliveryState").asText() : "";
    String blob = message.path("blobB64").asText();
    DmContainer container = parse(blob);
    String when = container == null ? "?" : Instant.ofEpochMilli(container.createdAtMs()).toString();
    String who = container == null ? "?" : (message.path("direction").asText().equals("outgoing")
        ? "-> " + container.to() : "<- " + container.from());
    return String.join("  ", when, who, state.isEmpty() ? (message.path("read").asBoolean() ? "read" : "")
        : state + (message.path("read").asBoolean() ? ",read" : ""), bodyText(blob));
  }

  private static String bodyText(String blobB64) {
    DmContainer container = parse(blobB64);
    return container == null ? "(unreadable container)" : new String(container.body(), StandardCharsets.UTF_8);
  }

  private static DmContainer parse(String blobB64) {
    try {
      return DmCodec.parse(Base64.getDecoder().decode(blobB64));
    } catch (DmFormatException | IllegalArgumentException e) {
      return null;
    }
  }

}
