package org.shine.server.cli;

import io.vertx.core.Vertx;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.shine.server.client.MessageSealer;
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
        "Type a line and Enter to send it; /help lists the commands (/edit, /delete, /history, /quit).",
        "Ctrl-C, Ctrl-D or /quit leaves once your server has what you sent (exit code 3 if it never answered).",
        "Colours only on a terminal."})
final class ChatCommand extends UserCommand {
  /** Work waiting for the chat's thread: events, answers, typed lines. */
  private static final int QUEUE = 10_000;
  /** How long leaving waits for the server to accept what was typed. */
  static final long LEAVE_WAIT_MS = 10_000;
  /** After a stop signal, how long lines still coming from the input thread are taken. */
  private static final long STOP_GRACE_MS = 300;
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
  /** Counted down when the chat has ended (Ctrl-C in a shutdown hook waits for it). */
  private final CountDownLatch ended = new CountDownLatch(1);
  private volatile boolean leaveNow;
  private LiveSession session;
  private ChatConversation conversation;
  private ChatScreen screen;

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
    boolean editor = context.interactive() && !forcePlain && !"dumb".equals(context.env().get("TERM"));
    try (ChatInput input = ChatInput.open(context, editor, context.interactive())) {
      screen = new ChatScreen(input.sink(), terminal, input.echoes(), input::columns, input::rows);
      return chat(vertx, user, input);
    } finally {
      ended.countDown();
    }
  }

  private int chat(Vertx vertx, ClientSupport.Identity user, ChatInput input) {
    // the conversation is made before the work queue runs, so the items queued here find it
    session = new LiveSession(vertx, options.server, user, notice -> offer(() -> screen.print("-- " + notice)),
        true, event -> offer(() -> conversation.onEvent(event)), () -> offer(() -> conversation.caughtUp())).open();
    requireUser(session.client(), peer);
    ContactCards.Judged theirs = ClientSupport.await(contacts().card(vertx, session.client(), peer));
    ContactCards.Judged mine = ClientSupport.await(contacts().card(vertx, session.client(), user.login()));
    conversation = new ChatConversation(screen, user, peer, history, session::client,
        ClientSupport.verifier(vertx, user.login(), session::client, contacts()), reader(user),
        new MessageSealer(theirs.encryptionKeyB64(), mine.encryptionKeyB64()), theirs.warning(), this::offer);
    screen.print("-- chat with " + peer + " as " + user.login() + " on " + options.server
        + " (Enter sends, /help lists the commands, /quit or Ctrl-C leaves)");
    if (theirs.blocked()) {
      screen.print("-- " + theirs.warning() + ": nothing typed here is sent to " + peer + " (if " + peer
          + " confirms the change another way: client keys trust --contact " + peer + ")");
    } else if (theirs.encryptionKeyB64() == null) {
      screen.print("-- not end-to-end encrypted: " + peer + "'s card has no encryption key");
    }
    conversation.showHistory();
    // Ctrl-C without a line editor stops the process: the hook waits while what was typed reaches the server
    context.onStop(() -> awaitEnd(LEAVE_WAIT_MS + 2_000));
    Thread reader = new Thread(() -> readLines(input), "chat-input");
    reader.setDaemon(true);
    reader.start();
    try {
      runUntilLeaving();
      return leave() ? 0 : CliFailure.UNREACHABLE;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return CliFailure.FAILED;
    } finally {
      session.close();
    }
  }

  /** Runs the work queue until the input ends, /quit, Ctrl-C, or the session fails for good. */
  private void runUntilLeaving() throws InterruptedException {
    while (!context.isStopped()) {
      if (session.ended().failed()) {
        throw CliErrors.classify(session.ended().cause());
      }
      Runnable next = work.poll(200, TimeUnit.MILLISECONDS);
      if (next == END) {
        return;
      }
      if (next != null) {
        next.run();
      }
    }
  }

  /**
   * Before the chat ends: what is queued runs (lines typed before leaving are sent), then the chat waits up to
   * {@link #LEAVE_WAIT_MS} for the server to answer every message sent, and names each one it did not confirm.
   * Answers whether the server confirmed them all.
   */
  private boolean leave() throws InterruptedException {
    // stopped by Ctrl-C without a line editor (a signal): a line typed just before may still be on its way
    long grace = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(context.isStopped() ? STOP_GRACE_MS : 0);
    for (Runnable next; (next = work.poll()) != null || System.nanoTime() < grace; ) {
      if (next == null) {
        Thread.sleep(10);
      } else if (next != END) {
        next.run();
      }
    }
    if (conversation.unansweredCount() > 0) {
      screen.print("-- waiting for your server to accept " + count(conversation.unansweredCount())
          + " before leaving (at most " + LEAVE_WAIT_MS / 1000 + " s; Ctrl-C again leaves now)");
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LEAVE_WAIT_MS);
    while (conversation.unansweredCount() > 0 && !leaveNow && System.nanoTime() < deadline
        && !session.ended().failed()) {
      Runnable next = work.poll(100, TimeUnit.MILLISECONDS);
      if (next != null && next != END) {
        next.run();
      }
    }
    List<String> unconfirmed = conversation.unansweredTexts();
    for (String text : unconfirmed) {
      screen.print("-- not confirmed by your server: " + text + " (client history --peer " + peer
          + " shows whether it arrived)");
    }
    return unconfirmed.isEmpty();
  }

  private static String count(int messages) {
    return messages == 1 ? "1 message" : messages + " messages";
  }

  /**
   * Called by {@link CliContext#stop()} (Ctrl-C without a line editor, in the shutdown hook): waits, at most
   * {@code ms}, while the chat leaves; past that the chat stops waiting for answers.
   */
  private void awaitEnd(long ms) {
    if (context.isStopped() && ended.getCount() > 0 && conversation != null) {
      try {
        if (!ended.await(ms, TimeUnit.MILLISECONDS)) {
          leaveNow = true;
        }
      } catch (InterruptedException e) {
        leaveNow = true;
        Thread.currentThread().interrupt();
      }
    }
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

  /** The input thread: each typed line goes to the chat's thread; the end of input, /quit and Ctrl-C end it. */
  private void readLines(ChatInput input) {
    try {
      String line;
      while ((line = input.readLine()) != null) {
        String typed = line;
        if (ChatLine.parse(typed) instanceof ChatLine.Quit) {
          break;
        }
        work.put(() -> conversation.typed(typed));
      }
      work.put(END);
    } catch (ChatInput.Interrupted e) {
      String partial = e.partial();
      if (!partial.isBlank()) {
        offer(() -> screen.print("-- not sent (Enter was not pressed): " + ChatConversation.quote(partial)));
      }
      offer(END);
    } catch (java.io.IOException e) {
      offer(END);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    input.untilInterrupted(() -> leaveNow = true); // Ctrl-C again while leaving: leave at once
  }

  /** From an event loop: never blocks; a full queue loses the item and says so. */
  private void offer(Runnable item) {
    if (!work.offer(item)) {
      context.err().println("chat: too much at once, an update was dropped (history shows the current state)");
    }
  }
}
