package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.shine.server.client.ContainerVerifier;
import org.shine.server.client.MessageBody;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.client.Verdict;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code client chat}: an interactive session with one peer. It shows the recent history, then new messages as they
 * arrive; each line typed is sent, and each message of the user carries the seed's §8 indicator, kept current from
 * the send's answer, {@code DmDeliveryStateChanged} and {@code DmReadReceipt}. Messages of the peer that are shown
 * get a read receipt. After a lost connection it reconnects, sends again (the same signed bytes) what had no answer,
 * and catches up from history. Every container received is verified against its author's card first (PROTOCOL §13):
 * one that does not verify is shown once as "not verified" with the reason, never as text, gets no read receipt and
 * changes no tick.
 */
@Command(name = "chat", mixinStandardHelpOptions = true,
    description = {"Chat with one user: history, new messages as they arrive, and a tick on each of yours:",
        "grey ✓ accepted by your server, light ✓ delivered to a server of the peer, ✓✓ read, red ! not delivered.",
        "Type a line and Enter to send it; /quit or Ctrl-D leaves. Colours only on a terminal."})
final class ChatCommand extends UserCommand {
  /** Work waiting for the chat's thread: events, answers, typed lines. */
  private static final int QUEUE = 10_000;
  /** Messages whose lines the chat keeps track of (for ticks and repeats); older ones are forgotten. */
  private static final int TRACKED = 10_000;
  /** Messages sent and not yet answered (kept to be sent again after a reconnection). */
  private static final int UNANSWERED = 1_000;
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
  private final Map<String, Mine> mine = bounded();
  /** The peer's messages on screen, with the revision shown: a later revision (an edit) is shown again. */
  private final Map<String, Long> shown = bounded();
  private final Map<String, Boolean> receipted = bounded();
  /** Containers shown as not verified (by messageKey and revision, or receipt), each shown once. */
  private final Map<String, Boolean> flagged = bounded();
  private final Map<String, ShineClient.SignedPair> unanswered = new LinkedHashMap<>();
  private ChatScreen screen;
  private LiveSession session;
  private ContainerVerifier verifier;
  private ClientSupport.Identity user;

  ChatCommand(CliContext context) {
    super(context);
  }

  /** A message of the user: its line on screen (-1: not printed yet) and its tick now. */
  private static final class Mine {
    int line;
    final MessageView view;
    Tick tick;

    Mine(int line, MessageView view, Tick tick) {
      this.line = line;
      this.view = view;
      this.tick = tick;
    }
  }

  @Override
  int run(Vertx vertx, ClientSupport.Identity user) {
    if (forceTerminal && forcePlain) {
      throw CliFailure.usage("--terminal and --plain exclude each other");
    }
    if (peer.equals(user.login())) {
      throw CliFailure.usage("--peer is the other user, not " + user.login());
    }
    this.user = user;
    boolean terminal = forceTerminal || (!forcePlain && context.terminal());
    screen = new ChatScreen(context.out(), terminal, context.terminal() && !forceTerminal, rows());
    session = new LiveSession(vertx, options.server, user, notice -> offer(() -> screen.print("-- " + notice)),
        true, event -> offer(() -> onEvent(event)), () -> offer(this::caughtUp)).open();
    verifier = ClientSupport.verifier(vertx, user.login(), session::client);
    requireUser(session.client(), peer);
    screen.print("-- chat with " + peer + " as " + user.login() + " on " + options.server
        + " (Enter sends, /quit or Ctrl-D leaves)");
    showHistory(session.client());
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
        work.put(() -> send(typed));
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

  private void showHistory(ShineClient client) {
    JsonNode page = ClientSupport.await(client.request("GetDirectMessages",
        ShineClient.object().put("peer", peer).put("limit", Math.max(1, Math.min(200, history)))));
    List<JsonNode> entries = new ArrayList<>();
    page.path("messages").forEach(entries::add);
    Collections.reverse(entries);
    List<Verdict> verdicts = ClientSupport.await(Future.all(entries.stream().map(verifier::historyEntry).toList())
        .map(all -> all.<Verdict>list()));
    for (int i = 0; i < entries.size(); i++) {
      showEntry(entries.get(i), verdicts.get(i));
    }
  }

  /** A history entry: new ones are printed, known ones of the user get their tick updated. */
  private void showEntry(JsonNode entry, Verdict verdict) {
    MessageView view = MessageView.of(entry.path("blobB64").asText(), verdict);
    if (view == null || flag(view, entry.path("messageKey").asText())) {
      return;
    }
    boolean deleted = entry.path("deleted").asBoolean();
    if (entry.path("direction").asText().equals("outgoing")) {
      Tick tick = Tick.of(entry.path("deliveryState").asText(null), entry.path("read").asBoolean());
      Mine known = mine.get(view.baseKey());
      if (known == null) {
        mine.put(view.baseKey(), new Mine(screen.print(ownLine(view, tick)), view, tick));
      } else {
        update(view.baseKey(), tick);
      }
      return;
    }
    showPeers(view, deleted);
    if (!entry.path("read").asBoolean() && !deleted) {
      sendReceipt(view.baseKey());
    }
  }

  /** Prints a message of the peer unless that revision of it is on screen already. */
  private void showPeers(MessageView view, boolean deleted) {
    Long before = shown.get(view.baseKey());
    if (before == null || view.revision() > before) {
      shown.put(view.baseKey(), view.revision());
      screen.print(view.chatLine(deleted, screen.terminal()));
    }
  }

  /**
   * True when {@code view} did not verify: it is printed once with its mark (by {@code key} and revision) and takes
   * no further part (no tick, no receipt, no place among the verified messages of the same key).
   */
  private boolean flag(MessageView view, String key) {
    if (view.verified()) {
      return false;
    }
    if (flagged.putIfAbsent(key + "|r" + view.revision(), true) == null) {
      screen.print(view.chatLine(false, screen.terminal()));
    }
    return true;
  }

  private void send(String text) {
    if (text.isBlank()) {
      return;
    }
    screen.eraseTypedLine();
    if (unanswered.size() >= UNANSWERED) {
      screen.print("-- not sent (" + UNANSWERED + " messages still wait for the server): " + text);
      return;
    }
    ShineClient.SignedPair pair = ShineClient.signPair(user.login(), user.key(), peer, System.currentTimeMillis(),
        ShineClient.randomNonce(), 0, MessageBody.encode(text));
    MessageView view = new MessageView(pair.outgoing().baseKey(), user.login(), peer, pair.outgoing().createdAtMs(),
        0, text, Verdict.VERIFIED);
    // on a terminal the line shows at once and its tick changes in place; piped, it is printed with the answer
    int line = screen.terminal() ? screen.print(ownLine(view, Tick.SENDING)) : -1;
    mine.put(view.baseKey(), new Mine(line, view, Tick.SENDING));
    unanswered.put(view.baseKey(), pair);
    submit(pair);
  }

  private void submit(ShineClient.SignedPair pair) {
    String baseKey = pair.outgoing().baseKey();
    session.client().sendPair(pair).onComplete(answer -> offer(() -> answered(baseKey, answer)));
  }

  private void answered(String baseKey, AsyncResult<JsonNode> answer) {
    if (answer.succeeded()) {
      unanswered.remove(baseKey);
      update(baseKey, Tick.of(answer.result().path("deliveryState").asText(), false));
      return;
    }
    if (!(answer.cause() instanceof ShineClientException refused) || refused.status() == 0) {
      return; // no answer from the server: sent again, as the same signed bytes, once the session is back
    }
    unanswered.remove(baseKey);
    Mine message = mine.get(baseKey);
    screen.print("-- not sent: " + (message == null ? baseKey : message.view.text()) + ": "
        + CliErrors.classify(answer.cause()).getMessage());
  }

  private void onEvent(JsonNode event) {
    JsonNode payload = event.path("payload");
    Verdict verdict = ClientSupport.await(verifier.event(event));
    switch (event.path("op").asText()) {
      case "IncomingDirectMessage" -> {
        MessageView view = MessageView.of(payload.path("blobB64").asText(), verdict);
        if (view != null && view.from().equals(peer) && !flag(view, payload.path("messageKey").asText())
            && view.to().equals(user.login())) {
          showPeers(view, false);
          sendReceipt(view.baseKey());
        }
      }
      case "OutgoingDirectMessage" -> {
        MessageView view = MessageView.of(payload.path("blobB64").asText(), verdict);
        if (view != null && view.to().equals(peer) && !flag(view, payload.path("messageKey").asText())
            && !mine.containsKey(view.baseKey())) {
          Tick tick = Tick.of(payload.path("deliveryState").asText(), false);
          mine.put(view.baseKey(), new Mine(screen.print(ownLine(view, tick)), view, tick));
        }
      }
      case "DmDeliveryStateChanged" -> update(payload.path("baseKey").asText(),
          Tick.of(payload.path("deliveryState").asText(), false));
      case "DmReadReceipt" -> {
        if (verdict.trusted()) {
          update(payload.path("baseKey").asText(), Tick.READ);
        } else if (mine.containsKey(payload.path("baseKey").asText())
            && flagged.putIfAbsent("receipt|" + payload.path("baseKey").asText(), true) == null) {
          screen.print("-- " + MessageView.notVerified(verdict.reason(), screen.terminal()) + " a read receipt for "
              + payload.path("baseKey").asText());
        }
      }
      default -> {
      }
    }
  }

  /** After a reconnection: what had no answer is sent again, and history brings what happened meanwhile. */
  private void caughtUp() {
    new ArrayList<>(unanswered.values()).forEach(this::submit);
    try {
      showHistory(session.client());
    } catch (CliFailure e) {
      screen.print("-- could not refresh the history: " + e.getMessage());
    }
  }

  private void update(String baseKey, Tick reported) {
    Mine message = mine.get(baseKey);
    if (message == null) {
      return;
    }
    Tick next = message.tick.then(reported);
    if (next == message.tick) {
      return;
    }
    message.tick = next;
    if (message.line < 0) {
      message.line = screen.print(ownLine(message.view, next));
    } else {
      screen.redraw(message.line, ownLine(message.view, next));
    }
  }

  private void sendReceipt(String baseKey) {
    if (receipted.putIfAbsent(baseKey, true) != null) {
      return;
    }
    session.client().sendReadReceipt(ShineClient.signReceipt(user.login(), user.key(), peer, baseKey,
        System.currentTimeMillis())).onFailure(failure -> offer(() -> receipted.remove(baseKey)));
  }

  private String ownLine(MessageView view, Tick tick) {
    return view.chatLine(false, screen.terminal()) + "  " + tick.render(screen.terminal());
  }

  private int rows() {
    try {
      return Integer.parseInt(context.env().getOrDefault("LINES", "24"));
    } catch (NumberFormatException e) {
      return 24;
    }
  }

  private static <V> Map<String, V> bounded() {
    return new LinkedHashMap<>(16, 0.75f, false) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
        return size() > TRACKED;
      }
    };
  }
}
