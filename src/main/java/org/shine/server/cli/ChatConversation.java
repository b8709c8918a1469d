package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.AsyncResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.shine.server.client.BodyReader;
import org.shine.server.client.ContainerVerifier;
import org.shine.server.client.MessageSealer;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.client.Verdict;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKeys;

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
  private final BodyReader reader;
  private final MessageSealer sealer;
  private final String blocked;
  private final Consumer<Runnable> offer;
  private final OwnMessages mine;
  /** The peer's messages on screen, with the revision shown: a later revision (an edit) is shown again. */
  private final Map<String, Long> shown = RecentMap.of(TRACKED);
  private final Map<String, Boolean> receipted = RecentMap.of(TRACKED);
  /** Containers shown as not verified (by messageKey and revision, or receipt), each shown once. */
  private final Map<String, Boolean> flagged = RecentMap.of(TRACKED);
  private final Map<String, ShineClient.SignedPair> unanswered = new LinkedHashMap<>();

  /**
   * {@code history}: messages shown on open; {@code client}: the session's connection at the time; {@code offer}:
   * hands work back to the chat's thread without blocking; {@code reader} reads (decrypts) bodies, {@code sealer}
   * seals what is sent, and {@code blocked}, when not null, is the warning that keeps the chat from sending at all
   * (the peer's card does not follow from the pinned one).
   */
  ChatConversation(ChatScreen screen, ClientSupport.Identity user, String peer, int history,
      Supplier<ShineClient> client, ContainerVerifier verifier, BodyReader reader, MessageSealer sealer,
      String blocked, Consumer<Runnable> offer) {
    this.screen = Objects.requireNonNull(screen);
    this.user = Objects.requireNonNull(user);
    this.peer = Objects.requireNonNull(peer);
    this.history = history;
    this.client = Objects.requireNonNull(client);
    this.verifier = Objects.requireNonNull(verifier);
    this.reader = Objects.requireNonNull(reader);
    this.sealer = Objects.requireNonNull(sealer);
    this.blocked = blocked;
    this.offer = Objects.requireNonNull(offer);
    this.mine = new OwnMessages(screen, TRACKED);
  }

  /**
   * The newest {@code history} messages, oldest first; those already on screen only get their tick updated. A
   * history that cannot come now never ends the chat: a lost connection is the session's to say (it brings the
   * history again once reconnected, {@link #caughtUp}); any other refusal, such as the 503 of a server that is
   * shutting down, is said on screen.
   */
  void showHistory() {
    try {
      ClientSupport.history(client.get(), verifier, peer, history).forEach(this::showEntry);
    } catch (CliFailure e) {
      screen.print("-- could not show the history: " + e.getMessage());
    } catch (ShineClientException e) {
      if (!ShineClient.CONNECTION_CLOSED.equals(e.code())) {
        screen.print("-- could not show the history: " + e.getMessage());
      }
    }
  }

  /** A history entry: new ones are printed, known ones of the user get their tick (and a new revision) shown. */
  private void showEntry(ClientSupport.Checked checked) {
    JsonNode entry = checked.entry();
    MessageView view = MessageView.of(entry.path("blobB64").asText(), checked.verdict(), reader);
    if (view == null || flag(view, entry.path("messageKey").asText())) {
      return;
    }
    boolean deleted = entry.path("deleted").asBoolean();
    if (entry.path("direction").asText().equals("outgoing")) {
      mine.reported(view, Tick.of(entry.path("deliveryState").asText(null), entry.path("read").asBoolean()),
          deleted);
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

  /** A typed line: a message to send (a blank one is ignored) or one of the chat's commands. */
  void typed(String typed) {
    if (typed.isBlank()) {
      return;
    }
    screen.eraseTypedLine(typed);
    ChatLine line = ChatLine.parse(typed);
    if (line instanceof ChatLine.Message message) {
      send(message.text());
    } else if (line instanceof ChatLine.Edit edit) {
      edit(edit.back(), edit.text());
    } else if (line instanceof ChatLine.Delete delete) {
      delete(delete.back());
    } else if (line instanceof ChatLine.History shown) {
      reprint(shown.count());
    } else if (line instanceof ChatLine.Help) {
      ChatLine.HELP.forEach(help -> screen.print("-- " + help));
    } else if (line instanceof ChatLine.Unknown unknown) {
      screen.print("-- " + unknown.reason());
    } // Quit: the input thread ends the chat
  }

  /**
   * The bodies of {@code text} (sealed to their owners when their cards have encryption keys), or null when the chat
   * does not send to this peer or a body is over the size of a message body (counted as sealed): then the screen says
   * so, with {@code refused} ("not sent", "not edited") first.
   */
  private MessageSealer.Bodies bodies(String text, String refused, long createdAtMs, long nonce, long revision) {
    if (blocked != null) {
      screen.print("-- " + refused + ": " + quote(text) + ": " + blocked);
      return null;
    }
    MessageSealer.Bodies bodies = sealer.bodies(user.login(), peer, createdAtMs, nonce, revision, text);
    if (bodies.fits()) {
      return bodies;
    }
    screen.print("-- " + refused + ": " + quote(text) + " is " + String.format(Locale.ROOT, "%,d", text.length())
        + " characters (" + String.format(Locale.ROOT, "%,d", bodies.largest()) + " bytes); a message holds at"
        + " most " + String.format(Locale.ROOT, "%,d", DmCodec.DEFAULT_MAX_BODY) + " bytes: shorten it or send it in"
        + " parts");
    return null;
  }

  /** Signs and sends a new message, unless it is over the size of a message body. */
  private void send(String text) {
    if (unanswered.size() >= UNANSWERED) {
      screen.print("-- not sent (" + UNANSWERED + " messages still wait for the server): " + quote(text));
      return;
    }
    long createdAtMs = System.currentTimeMillis();
    long nonce = ShineClient.randomNonce();
    MessageSealer.Bodies bodies = bodies(text, "not sent", createdAtMs, nonce, 0);
    if (bodies == null) {
      return;
    }
    ShineClient.SignedPair pair = MessageSealer.sign(user.login(), user.key(), peer, createdAtMs, nonce, 0, bodies);
    MessageView view = MessageView.own(pair.outgoing().baseKey(), user.login(), peer, createdAtMs, 0, text);
    mine.typed(view);
    unanswered.put(view.baseKey(), pair);
    submit(pair);
  }

  /** {@code /edit}: a new revision of the user's {@code back}-th last message, shown in place once accepted. */
  private void edit(int back, String text) {
    MessageView message = ownMessage(back, "edit");
    if (message == null) {
      return;
    }
    DmKeys.ParsedKey key = DmKeys.parseBaseKey(message.baseKey());
    long revision = message.revision() + 1;
    MessageSealer.Bodies bodies = bodies(text, "not edited", key.createdAtMs(), key.nonce(), revision);
    if (bodies == null) {
      return;
    }
    ShineClient.SignedPair pair = MessageSealer.sign(user.login(), user.key(), peer, key.createdAtMs(), key.nonce(),
        revision, bodies);
    MessageView edited = MessageView.own(message.baseKey(), user.login(), peer, key.createdAtMs(), revision, text);
    client.get().sendPair(pair).onComplete(answer -> offer.accept(() -> {
      if (answer.failed()) {
        screen.print("-- not edited: " + quote(message.text()) + ": " + reason(answer.cause()));
        return;
      }
      mine.revise(message.baseKey(), edited, false);
      mine.tick(message.baseKey(), Tick.of(answer.result().path("deliveryState").asText(), false));
    }));
  }

  /** {@code /delete}: a tombstone for the user's copy of the {@code back}-th last message, shown once accepted. */
  private void delete(int back) {
    MessageView message = ownMessage(back, "delete");
    if (message == null) {
      return;
    }
    DmContainer tombstone = ShineClient.signTombstone(user.login(), user.key(), peer,
        DmKeys.outgoingKey(message.baseKey()), System.currentTimeMillis());
    client.get().deleteMessage(tombstone).onComplete(answer -> offer.accept(() -> {
      if (answer.failed()) {
        screen.print("-- not deleted: " + quote(message.text()) + ": " + reason(answer.cause()));
        return;
      }
      mine.revise(message.baseKey(), message, true);
    }));
  }

  /** The user's {@code back}-th last message that the server has and that is not deleted, or null (said so). */
  private MessageView ownMessage(int back, String verb) {
    MessageView message = mine.nthLast(back, unanswered::containsKey);
    if (message == null) {
      screen.print("-- nothing to " + verb + ": " + (back == 1 ? "you have no message here"
          : "you have fewer than " + back + " messages here") + " that your server has");
    }
    return message;
  }

  /** {@code /history}: the newest {@code count} messages again, as {@code client history} prints them. */
  private void reprint(int count) {
    List<ClientSupport.Checked> page = ClientSupport.history(client.get(), verifier, peer, count);
    screen.print("-- the last " + page.size() + " messages with " + peer + ":");
    page.forEach(checked -> screen.print(MessageView.historyLine(checked.entry(), checked.verdict(),
        reader, screen.terminal())));
    screen.print("-- end of history");
  }

  /** Messages typed and not yet answered by the server. */
  int unansweredCount() {
    return unanswered.size();
  }

  /** The texts of the messages not yet answered, for the user to see what may not have arrived. */
  List<String> unansweredTexts() {
    return unanswered.keySet().stream().map(key -> quote(mine.view(key) == null ? key : mine.view(key).text()))
        .toList();
  }

  /** A message's text as quoted in a notice: on one line, at most 60 characters. */
  static String quote(String text) {
    String flat = text.replaceAll("\\s+", " ").strip();
    return "\"" + (flat.length() > 60 ? flat.substring(0, 59) + "…" : flat) + "\"";
  }

  private void submit(ShineClient.SignedPair pair) {
    String baseKey = pair.outgoing().baseKey();
    client.get().sendPair(pair).onComplete(answer -> offer.accept(() -> answered(baseKey, answer)));
  }

  private void answered(String baseKey, AsyncResult<JsonNode> answer) {
    if (answer.succeeded()) {
      unanswered.remove(baseKey);
      mine.tick(baseKey, Tick.of(answer.result().path("deliveryState").asText(), false));
      return;
    }
    if (!(answer.cause() instanceof ShineClientException refused) || refused.status() == 0) {
      return; // no answer from the server: sent again, as the same signed bytes, once the session is back
    }
    unanswered.remove(baseKey);
    MessageView message = mine.view(baseKey);
    screen.print("-- not sent: " + (message == null ? baseKey : quote(message.text())) + ": "
        + reason(answer.cause()));
  }

  private static String reason(Throwable failure) {
    return CliErrors.classify(failure).getMessage();
  }

  /** A server event: a message of this conversation, a new delivery state or a read receipt. */
  void onEvent(JsonNode event) {
    JsonNode payload = event.path("payload");
    Verdict verdict = ClientSupport.await(verifier.event(event));
    switch (event.path("op").asText()) {
      case "IncomingDirectMessage" -> {
        MessageView view = MessageView.of(payload.path("blobB64").asText(), verdict, reader);
        if (view != null && view.from().equals(peer) && !flag(view, payload.path("messageKey").asText())
            && view.to().equals(user.login())) {
          showPeers(view, false);
          sendReceipt(view.baseKey());
        }
      }
      case "OutgoingDirectMessage" -> {
        MessageView view = MessageView.of(payload.path("blobB64").asText(), verdict, reader);
        if (view != null && view.to().equals(peer) && !flag(view, payload.path("messageKey").asText())) {
          // new, or an edit made in another session of the user
          mine.reported(view, Tick.of(payload.path("deliveryState").asText(), false), false);
        }
      }
      case "DmDeliveryStateChanged" -> mine.tick(payload.path("baseKey").asText(),
          Tick.of(payload.path("deliveryState").asText(), false));
      case "DmReadReceipt" -> {
        if (verdict.trusted()) {
          mine.tick(payload.path("baseKey").asText(), Tick.READ);
        } else if (mine.contains(payload.path("baseKey").asText())
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
    showHistory();
  }

  private void sendReceipt(String baseKey) {
    if (receipted.putIfAbsent(baseKey, true) != null) {
      return;
    }
    client.get().sendReadReceipt(ShineClient.signReceipt(user.login(), user.key(), peer, baseKey,
        System.currentTimeMillis())).onFailure(failure -> offer.accept(() -> receipted.remove(baseKey)));
  }
}
