package org.shine.server.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.shine.server.client.ContainerVerifier;
import org.shine.server.client.MessageBody;
import org.shine.server.client.Resender;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.client.ShineClientException;
import org.shine.server.client.Verdict;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKeys;
import org.shine.server.util.Json;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code client ...}: a user's WebSocket client from the shell, readable by default, {@code --json} for scripts. */
@Command(name = "client", mixinStandardHelpOptions = true,
    description = "A user's client of an access server: register, send, read, edit, delete, settings, chat.",
    subcommands = {
        ClientCommand.Register.class,
        ClientCommand.Send.class,
        ClientCommand.History.class,
        ClientCommand.Listen.class,
        ClientCommand.Edit.class,
        ClientCommand.Read.class,
        ClientCommand.Delete.class,
        ClientCommand.Settings.class,
        ChatCommand.class,
        HelpCommand.class,
    })
final class ClientCommand {
  private ClientCommand() {
  }

  /** The options every subcommand that logs in takes. */
  static final class UserOptions {
    @Option(names = "--key", required = true, paramLabel = "FILE", description = "the user's key file (keygen)")
    Path keyFile;

    @Option(names = "--login", paramLabel = "LOGIN", description = "the user (default: the login in the key file)")
    String login;

    @Option(names = "--server", required = true, paramLabel = "URL",
        description = "one of the user's access servers, e.g. ws://127.0.0.1:7101/ws")
    String server;

    @Option(names = "--json", description = "one JSON object per line instead of readable text (for scripts)")
    boolean json;
  }

  /** A subcommand that runs logged in as the user, on its own Vert.x instance. */
  abstract static class UserCommand implements Callable<Integer> {
    /** How long one try of a signed request waits for its answer before the same bytes go again. */
    static final long ANSWER_MS = Resender.Policy.DEFAULT.answerTimeoutMs();
    @Mixin
    UserOptions options;

    final CliContext context;

    UserCommand(CliContext context) {
      this.context = context;
    }

    @Override
    public final Integer call() {
      ClientSupport.Identity user = ClientSupport.identity(options.keyFile, options.login);
      Vertx vertx = Vertx.vertx();
      try {
        return run(vertx, user);
      } finally {
        ClientSupport.close(vertx);
      }
    }

    abstract int run(Vertx vertx, ClientSupport.Identity user);

    ShineClient session(Vertx vertx, ClientSupport.Identity user) {
      return ClientSupport.loggedIn(vertx, options.server, user);
    }

    /**
     * Sends one signed request until the server answers: after a 503, a 500, a 429, a timeout or a lost connection
     * the same signed bytes go again (reconnecting if needed), never newly signed ones, so a request stored before
     * its answer was lost is answered from what is stored instead of becoming a second message (PROTOCOL §3).
     */
    JsonNode untilAnswered(Vertx vertx, ClientSupport.Identity user, ShineClient first,
        Function<ShineClient, Future<JsonNode>> request) {
      Resender resender = new Resender(vertx, first, () -> ShineClient.connect(vertx, options.server)
          .compose(client -> client.login(user.login(), user.key()).map(client)), Resender.Policy.DEFAULT);
      return ClientSupport.await(resender.untilAnswered(request));
    }

    void print(JsonNode json, String text) {
      context.out().println(options.json ? json.toString() : text);
    }
  }

  @Command(name = "register", mixinStandardHelpOptions = true,
      description = "Publish the user's signed card naming 1-2 access servers (each URL is asked for its name).")
  static final class Register implements Callable<Integer> {
    @Option(names = "--key", required = true, paramLabel = "FILE", description = "the user's key file (keygen)")
    Path keyFile;

    @Option(names = "--login", paramLabel = "LOGIN", description = "the user (default: the login in the key file)")
    String login;

    @Option(names = "--server", required = true, paramLabel = "URL",
        description = "an access server of the user; give it twice for a user with two")
    List<String> servers;

    @Option(names = "--version", paramLabel = "N", description = "the card's version (default: the stored one + 1)")
    Long version;

    @Option(names = "--invite", paramLabel = "CODE", description = {"an invite code of a server that wants one for a"
        + " new user (directory.registration \"invite\"; its operator makes it with admin invite); give one per"
        + " --server, in the same order"})
    List<String> invites = new ArrayList<>();

    @Option(names = "--json", description = "the servers' answers as JSON lines")
    boolean json;

    private final CliContext context;

    Register(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      if (servers.size() > 2) {
        throw CliFailure.usage("register takes one or two --server URLs");
      }
      if (invites.size() > servers.size()) {
        throw CliFailure.usage("register takes at most one --invite per --server");
      }
      ClientSupport.Identity user = ClientSupport.identity(keyFile, login);
      Vertx vertx = Vertx.vertx();
      try {
        List<Map.Entry<String, String>> routes = new ArrayList<>();
        List<ShineClient> clients = new ArrayList<>();
        for (String url : servers) {
          ShineClient client = ClientSupport.connect(vertx, url);
          clients.add(client);
          routes.add(Map.entry(ClientSupport.await(client.serverLogin(user.login())), url));
        }
        long cardVersion = version != null ? version : nextVersion(clients.get(0), user.login());
        for (int i = 0; i < clients.size(); i++) {
          JsonNode answer = ClientSupport.await(clients.get(i).publishCard(user.login(), user.key(), routes,
              cardVersion, i < invites.size() ? invites.get(i) : null));
          context.out().println(json ? answer.toString() : "registered " + user.login() + " on "
              + routes.get(i).getKey() + " (" + routes.get(i).getValue() + "), card version " + cardVersion);
        }
        return 0;
      } finally {
        ClientSupport.close(vertx);
      }
    }

    private static long nextVersion(ShineClient client, String login) {
      try {
        return ClientSupport.await(client.request("GetUserCard", ShineClient.object().put("login", login)))
            .path("card").path("version").asLong() + 1;
      } catch (ShineClientException e) {
        if (e.status() == 404) {
          return 1;
        }
        throw e;
      }
    }
  }

  @Command(name = "send", mixinStandardHelpOptions = true, description = "Send a text message.")
  static final class Send extends UserCommand {
    @Option(names = "--to", required = true, paramLabel = "LOGIN", description = "the recipient")
    String to;

    @Option(names = "--text", required = true, paramLabel = "TEXT", description = "the message")
    String text;

    Send(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      ShineClient client = session(vertx, user);
      ShineClient.SignedPair pair = ShineClient.signPair(user.login(), user.key(), to, System.currentTimeMillis(),
          ShineClient.randomNonce(), 0, MessageBody.encode(text));
      JsonNode answer = untilAnswered(vertx, user, client, c -> c.sendPair(pair, ANSWER_MS));
      print(answer, Tick.of(answer.path("deliveryState").asText(), false).render(context.terminal()) + " to " + to
          + ": " + text + "  (" + answer.path("baseKey").asText() + ")");
      return 0;
    }
  }

  @Command(name = "history", mixinStandardHelpOptions = true,
      description = {"The conversation with a peer, oldest first, with the tick of each message sent.",
          "A message whose signature does not verify with its author's card shows as [! not verified: why]."})
  static final class History extends UserCommand {
    @Option(names = "--peer", required = true, paramLabel = "LOGIN", description = "the other user")
    String peer;

    @Option(names = "--limit", defaultValue = "50", paramLabel = "N", description = "newest N messages (1-200)")
    int limit;

    History(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      ShineClient client = session(vertx, user);
      ContainerVerifier verifier = ClientSupport.verifier(vertx, user.login(), () -> client);
      JsonNode page = ClientSupport.await(client.request("GetDirectMessages",
          ShineClient.object().put("peer", peer).put("limit", limit)));
      List<JsonNode> messages = new ArrayList<>();
      page.path("messages").forEach(messages::add);
      Collections.reverse(messages);
      List<Verdict> verdicts = ClientSupport.await(Future.all(messages.stream().map(verifier::historyEntry).toList())
          .map(all -> all.<Verdict>list()));
      for (int i = 0; i < messages.size(); i++) {
        JsonNode message = messages.get(i);
        ObjectNode annotated = message.deepCopy();
        MessageView.annotate(annotated, message.path("blobB64").asText(null), verdicts.get(i));
        print(annotated, MessageView.historyLine(message, verdicts.get(i), context.terminal()));
      }
      return 0;
    }
  }

  @Command(name = "listen", mixinStandardHelpOptions = true,
      description = {"Print the user's events as they arrive until Ctrl-C. When the server goes away it says",
          "\"connection lost\" on stderr and reconnects (or, with --no-reconnect, exits with code 3).",
          "A message whose signature does not verify with its author's card shows as [! not verified: why]."})
  static final class Listen extends UserCommand {
    /** Events received and not yet printed. */
    private static final int QUEUE = 10_000;
    @Option(names = "--no-reconnect", description = "exit (code 3) when the connection is lost")
    boolean noReconnect;

    Listen(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      // events are verified and printed in arrival order on this thread, never on the connection's event loop
      BlockingQueue<JsonNode> events = new ArrayBlockingQueue<>(QUEUE);
      LiveSession session = new LiveSession(vertx, options.server, user, context.err()::println, !noReconnect,
          event -> {
            if (!events.offer(event)) {
              context.err().println("listen: too many events at once, one was dropped (history has it)");
            }
          }, () -> { }).open();
      ContainerVerifier verifier = ClientSupport.verifier(vertx, user.login(), session::client);
      context.err().println("listening as " + user.login() + " on " + options.server + " (Ctrl-C to stop)");
      try {
        while (!context.isStopped()) {
          if (session.ended().failed()) {
            throw CliErrors.classify(session.ended().cause());
          }
          JsonNode event = events.poll(200, TimeUnit.MILLISECONDS);
          if (event != null) {
            show(event, ClientSupport.await(verifier.event(event)));
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        session.close();
      }
      return 0;
    }

    private void show(JsonNode event, Verdict verdict) {
      JsonNode payload = event.path("payload");
      if (payload.isObject()) {
        MessageView.annotate((ObjectNode) payload, payload.path("blobB64").asText(null), verdict);
      }
      print(event, EventText.describe(event, verdict, context.terminal()));
    }
  }

  @Command(name = "edit", mixinStandardHelpOptions = true,
      description = "Replace the text of a message you sent (a new revision of the same message).")
  static final class Edit extends UserCommand {
    @Option(names = "--message", required = true, paramLabel = "KEY", description = "its key, as history prints it")
    String message;

    @Option(names = "--text", required = true, paramLabel = "TEXT", description = "the new text")
    String text;

    Edit(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      DmKeys.ParsedKey key = ClientSupport.messageKey(message);
      if (!key.from().equals(user.login())) {
        throw CliFailure.usage("only the author edits a message: " + key.baseKey() + " is " + key.from() + "'s");
      }
      ShineClient client = session(vertx, user);
      JsonNode stored = find(client, key.to(), key);
      long revision = stored.path("revision").asLong() + 1;
      ShineClient.SignedPair pair = ShineClient.signPair(user.login(), user.key(), key.to(), key.createdAtMs(),
          key.nonce(), revision, MessageBody.encode(text));
      JsonNode answer = untilAnswered(vertx, user, client, c -> c.sendPair(pair, ANSWER_MS));
      print(answer, Tick.of(answer.path("deliveryState").asText(), false).render(context.terminal())
          + " edited (revision " + revision + ") to " + key.to() + ": " + text + "  (" + key.baseKey() + ")");
      return 0;
    }
  }

  @Command(name = "read", mixinStandardHelpOptions = true,
      description = "Tell the sender you read a message they sent you (a signed read receipt).")
  static final class Read extends UserCommand {
    @Option(names = "--message", required = true, paramLabel = "KEY", description = "its key, as history prints it")
    String message;

    Read(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      DmKeys.ParsedKey key = ClientSupport.messageKey(message);
      if (!key.to().equals(user.login())) {
        throw CliFailure.usage("a read receipt is for a message sent to you: " + key.baseKey() + " was sent to "
            + key.to());
      }
      ShineClient client = session(vertx, user);
      DmContainer receipt = ShineClient.signReceipt(user.login(), user.key(), key.from(), key.baseKey(),
          System.currentTimeMillis());
      JsonNode answer = untilAnswered(vertx, user, client, c -> c.sendReadReceipt(receipt, ANSWER_MS));
      print(answer, "read receipt for " + key.baseKey() + " sent to " + key.from() + " ("
          + answer.path("deliveryState").asText() + ")");
      return 0;
    }
  }

  @Command(name = "delete", mixinStandardHelpOptions = true,
      description = "Delete your copy of a message (a signed tombstone; your second server follows).")
  static final class Delete extends UserCommand {
    @Option(names = "--message", required = true, paramLabel = "KEY", description = "its key, as history prints it")
    String message;

    Delete(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      DmKeys.ParsedKey key = ClientSupport.messageKey(message);
      String copy;
      String counterpart;
      if (key.from().equals(user.login())) {
        copy = DmKeys.outgoingKey(key.baseKey());
        counterpart = key.to();
      } else if (key.to().equals(user.login())) {
        copy = DmKeys.incomingKey(key.baseKey());
        counterpart = key.from();
      } else {
        throw CliFailure.usage(key.baseKey() + " is a message between " + key.from() + " and " + key.to()
            + ", not one of " + user.login() + "'s");
      }
      ShineClient client = session(vertx, user);
      DmContainer tombstone = ShineClient.signTombstone(user.login(), user.key(), counterpart, copy,
          System.currentTimeMillis());
      JsonNode answer = untilAnswered(vertx, user, client, c -> c.deleteMessage(tombstone, ANSWER_MS));
      print(answer, "deleted your copy of " + key.baseKey());
      return 0;
    }
  }

  @Command(name = "settings", mixinStandardHelpOptions = true, description = "The user's settings.",
      subcommands = {Settings.Get.class, Settings.Set.class, HelpCommand.class})
  static final class Settings {
    private Settings() {
    }

    @Command(name = "get", mixinStandardHelpOptions = true, description = "Print every setting, or one.")
    static final class Get extends UserCommand {
      @Parameters(arity = "0..1", paramLabel = "KEY", description = "only this setting")
      String key;

      Get(CliContext context) {
        super(context);
      }

      @Override
      int run(Vertx vertx, ClientSupport.Identity user) {
        JsonNode settings = ClientSupport.await(session(vertx, user).allSettings());
        if (key != null) {
          if (!settings.has(key)) {
            throw new CliFailure(CliFailure.NOT_FOUND, "no setting " + key);
          }
          print(settings.get(key), settings.get(key).toString());
          return 0;
        }
        if (options.json) {
          context.out().println(settings);
          return 0;
        }
        settings.fields().forEachRemaining(e -> context.out().println(e.getKey() + " = " + e.getValue()));
        return 0;
      }
    }

    @Command(name = "set", mixinStandardHelpOptions = true, description = "Set one setting.")
    static final class Set extends UserCommand {
      @Parameters(index = "0", paramLabel = "KEY", description = "the setting")
      String key;

      @Parameters(index = "1", paramLabel = "VALUE",
          description = "its value: JSON (true, 3, \"a\", {...}); anything else is taken as a string")
      String value;

      Set(CliContext context) {
        super(context);
      }

      @Override
      int run(Vertx vertx, ClientSupport.Identity user) {
        JsonNode parsed;
        try {
          parsed = Json.MAPPER.readTree(value);
        } catch (JsonProcessingException e) {
          parsed = null;
        }
        JsonNode json = parsed == null || parsed.isMissingNode() ? Json.MAPPER.getNodeFactory().textNode(value)
            : parsed;
        JsonNode answer = ClientSupport.await(session(vertx, user).request("SetUserSetting",
            ShineClient.object().put("key", key).set("value", json)));
        print(answer, key + " = " + json);
        return 0;
      }
    }
  }

  /** The stored entry of one of the user's messages with {@code peer}, or {@link CliFailure#NOT_FOUND}. */
  static JsonNode find(ShineClient client, String peer, DmKeys.ParsedKey key) {
    JsonNode page = ClientSupport.await(client.request("GetDirectMessages", ShineClient.object().put("peer", peer)
        .put("beforeCreatedAtMs", key.createdAtMs() + 1).put("limit", 200)));
    for (JsonNode entry : page.path("messages")) {
      if (entry.path("baseKey").asText().equals(key.baseKey())) {
        return entry;
      }
    }
    throw new CliFailure(CliFailure.NOT_FOUND, "no message " + key.baseKey() + " in your history with " + peer);
  }
}
