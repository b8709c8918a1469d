package org.shine.server.cli;

import io.vertx.core.Vertx;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code client chat}: an interactive session with one peer. It shows the recent history, then new messages as they
 * arrive; each line typed is sent. This class holds the command's threads: a {@link LiveSession} that reconnects
 * after a lost connection, an input thread that reads the typed lines, and one work queue that the command's own
 * thread runs, so that events, answers and typed lines reach the {@link ChatConversation} (what is on screen, the
 * ticks, the read receipts) one at a time.
 */
@Command(name = "chat", mixinStandardHelpOptions = true,
    description = {"Chat with one user: history, new messages as they arrive, and a tick on each of yours.",
        "Ticks: grey … sending, grey ✓ accepted by your server, light ✓ delivered to a server of the peer, ✓✓ read,",
        "red ! not delivered.",
        "Type a line and Enter to send it; /quit or Ctrl-D leaves. Colours only on a terminal."})
final class ChatCommand extends UserCommand {
  /** Work waiting for the chat's thread: events, answers, typed lines. */
  private static final int QUEUE = 10_000;
  private static final Runnable END = () -> { };

  @Option(names = "--peer", required = true, paramLabel = "LOGIN", description = "the user to chat with")
  String peer;

  @Option(names = "--history", defaultValue = "20", paramLabel = "N", description = "messages shown on open")
  int history;

  @Option(names = "--terminal", description = "render as on a terminal (colours, ticks redrawn in place) even when"
      + " the output is not one")
  boolean forceTerminal;

  @Option(names = "--plain", description = "plain text even on a terminal")
  boolean forcePlain;

  private final BlockingQueue<Runnable> work = new ArrayBlockingQueue<>(QUEUE);
  private LiveSession session;
  private ChatConversation conversation;

  ChatCommand(CliContext context) {
    super(context);
  }

  @Override
  int run(Vertx vertx, ClientSupport.Identity user) {
    if (forceTerminal && forcePlain) {
      throw CliFailure.usage("--terminal and --plain exclude each other");
    }
    if (peer.equals(user.login())) {
      throw CliFailure.usage("--peer is the other user, not " + user.login());
    }
    boolean terminal = forceTerminal || (!forcePlain && context.terminal());
    ChatScreen screen = new ChatScreen(context.out(), terminal, context.terminal() && !forceTerminal, rows());
    // the conversation is made before the work queue runs, so the items queued here find it
    session = new LiveSession(vertx, options.server, user, notice -> offer(() -> screen.print("-- " + notice)),
        true, event -> offer(() -> conversation.onEvent(event)), () -> offer(() -> conversation.caughtUp())).open();
    conversation = new ChatConversation(screen, user, peer, history, session::client,
        ClientSupport.verifier(vertx, user.login(), session::client), this::offer);
    requireUser(session.client(), peer);
    screen.print("-- chat with " + peer + " as " + user.login() + " on " + options.server
        + " (Enter sends, /quit or Ctrl-D leaves)");
    conversation.showHistory();
    Thread reader = new Thread(this::readLines, "chat-input");
    reader.setDaemon(true);
    reader.start();
    try {
      while (!context.isStopped()) {
        if (session.ended().failed()) {
          throw CliErrors.classify(session.ended().cause());
        }
        Runnable next = work.poll(200, TimeUnit.MILLISECONDS);
        if (next == END) {
          break;
        }
        if (next != null) {
          next.run();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      session.close();
    }
    return 0;
  }

  private void requireUser(ShineClient client, String login) {
    try {
      ClientSupport.await(client.request("GetUserCard", ShineClient.object().put("login", login)));
    } catch (ShineClientException e) {
      if (e.status() == 404) {
        session.close();
        throw new CliFailure(CliFailure.NOT_FOUND, "there is no user " + login + " on " + options.server);
      }
      throw e;
    }
  }

  private void readLines() {
    try {
      String line;
      while ((line = context.in().readLine()) != null) {
        String typed = line;
        if (typed.strip().equals("/quit")) {
          break;
        }
        work.put(() -> conversation.send(typed));
      }
      work.put(END);
    } catch (java.io.IOException e) {
      offer(END);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** From an event loop: never blocks; a full queue loses the item and says so. */
  private void offer(Runnable item) {
    if (!work.offer(item)) {
      context.err().println("chat: too much at once, an update was dropped (history shows the current state)");
    }
  }

  private int rows() {
    try {
      return Integer.parseInt(context.env().getOrDefault("LINES", "24"));
    } catch (NumberFormatException e) {
      return 24;
    }
  }
}
