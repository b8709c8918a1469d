package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.shine.server.client.ContainerVerifier;
import org.shine.server.client.MessageBody;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.client.Verdict;

/**
 * What {@code client chat} shows of one conversation and keeps current: each message of the user carries the seed's
 * §8 indicator, kept current from the send's answer, {@code DmDeliveryStateChanged} and {@code DmReadReceipt};
 * messages of the peer that are shown get a read receipt; after a reconnection what had no answer is sent again (the
 * same signed bytes) and history brings what happened meanwhile. Every container received is verified against its
 * author's card first (PROTOCOL §13): one that does not verify is shown once as "not verified" with the reason, never
 * as text, gets no read receipt and changes no tick. Used only on the chat's own thread; answers that come on an
 * event loop are handed back through {@code offer}.
 */
final class ChatConversation {
  /** Messages whose lines the chat keeps track of (for ticks and repeats); older ones are forgotten. */
  private static final int TRACKED = 10_000;
  /** Messages sent and not yet answered (kept to be sent again after a reconnection). */
  private static final int UNANSWERED = 1_000;

  private final ChatScreen screen;
  private final ClientSupport.Identity user;
  private final String peer;
  private final int history;
  private final Supplier<ShineClient> client;
  private final ContainerVerifier verifier;
  private final Consumer<Runnable> offer;
  private final Map<String, Mine> mine = bounded();
  /** The peer's messages on screen, with the revision shown: a later revision (an edit) is shown again. */
  private final Map<String, Long> shown = bounded();
  private final Map<String, Boolean> receipted = bounded();
  /** Containers shown as not verified (by messageKey and revision, or receipt), each shown once. */
  private final Map<String, Boolean> flagged = bounded();
  private final Map<String, ShineClient.SignedPair> unanswered = new LinkedHashMap<>();

  /**
   * {@code history}: messages shown on open; {@code client}: the session's connection at the time; {@code offer}:
   * hands work back to the chat's thread without blocking.
   */
  ChatConversation(ChatScreen screen, ClientSupport.Identity user, String peer, int history,
      Supplier<ShineClient> client, ContainerVerifier verifier, Consumer<Runnable> offer) {
    this.screen = Objects.requireNonNull(screen);
    this.user = Objects.requireNonNull(user);
    this.peer = Objects.requireNonNull(peer);
    this.history = history;
    this.client = Objects.requireNonNull(client);
    this.verifier = Objects.requireNonNull(verifier);
    this.offer = Objects.requireNonNull(offer);
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

  /** The newest {@code history} messages, oldest first; those already on screen only get their tick updated. */
  void showHistory() {
    JsonNode page = ClientSupport.await(client.get().request("GetDirectMessages",
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

  /** Sends a typed line as a new message (a blank one is ignored). */
  void send(String text) {
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
    client.get().sendPair(pair).onComplete(answer -> offer.accept(() -> answered(baseKey, answer)));
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

  /** A server event: a message of this conversation, a new delivery state or a read receipt. */
  void onEvent(JsonNode event) {
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
  void caughtUp() {
    new ArrayList<>(unanswered.values()).forEach(this::submit);
    try {
      showHistory();
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
    client.get().sendReadReceipt(ShineClient.signReceipt(user.login(), user.key(), peer, baseKey,
        System.currentTimeMillis())).onFailure(failure -> offer.accept(() -> receipted.remove(baseKey)));
  }

  private String ownLine(MessageView view, Tick tick) {
    return view.chatLine(false, screen.terminal()) + "  " + tick.render(screen.terminal());
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
