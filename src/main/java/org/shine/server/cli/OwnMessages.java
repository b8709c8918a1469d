package org.shine.server.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * The user's own messages in {@code client chat} as the screen shows them: each one's line, newest revision, tick
 * (seed §8) and whether it was deleted. A change — a later tick, an edit, a delete — redraws the message's line
 * ({@link ChatScreen#redraw}); a deleted message shows only that it was. Used only on the chat's own thread; the
 * newest {@code tracked} messages are kept, older ones forgotten.
 */
final class OwnMessages {
  private final ChatScreen screen;
  private final Map<String, Mine> byKey;

  /** A message of the user: its line on screen (-1: not printed yet), its newest revision and its tick now. */
  private static final class Mine {
    int line = -1;
    MessageView view;
    Tick tick;
    boolean deleted;

    Mine(MessageView view, Tick tick) {
      this.view = view;
      this.tick = tick;
    }
  }

  OwnMessages(ChatScreen screen, int tracked) {
    this.screen = Objects.requireNonNull(screen);
    this.byKey = RecentMap.of(tracked);
  }

  /**
   * A message the server reports (history or an event): a new one is printed; a known one is shown anew when this
   * is a newer revision, a delete, or a later tick.
   */
  void reported(MessageView view, Tick tick, boolean deleted) {
    Mine known = byKey.get(view.baseKey());
    if (known == null) {
      Mine added = new Mine(view, tick);
      added.deleted = deleted;
      show(added);
      byKey.put(view.baseKey(), added);
      return;
    }
    revise(view.baseKey(), view, deleted);
    tick(view.baseKey(), tick);
  }

  /** A message just typed: printed at once on a terminal (its tick changes in place), else once it is answered. */
  void typed(MessageView view) {
    Mine message = new Mine(view, Tick.SENDING);
    if (screen.terminal()) {
      show(message);
    }
    byKey.put(view.baseKey(), message);
  }

  /** A later tick for {@code baseKey}: shown when it changes what is shown (a read message stays read). */
  void tick(String baseKey, Tick reported) {
    Mine message = byKey.get(baseKey);
    if (message == null) {
      return;
    }
    Tick next = message.tick.then(reported);
    if (next != message.tick) {
      message.tick = next;
      show(message);
    }
  }

  /** Shows {@code baseKey} anew when {@code view} is a newer revision of it or it is newly {@code deleted}. */
  void revise(String baseKey, MessageView view, boolean deleted) {
    Mine message = byKey.get(baseKey);
    if (message == null) {
      return;
    }
    boolean newer = view.revision() > message.view.revision();
    if (!newer && (!deleted || message.deleted)) {
      return;
    }
    if (newer) {
      message.view = view;
    }
    message.deleted |= deleted;
    show(message);
  }

  boolean contains(String baseKey) {
    return byKey.containsKey(baseKey);
  }

  /** The newest revision of {@code baseKey} on screen, or null. */
  MessageView view(String baseKey) {
    Mine message = byKey.get(baseKey);
    return message == null ? null : message.view;
  }

  /**
   * The user's {@code back}-th last message (1: the last) that is verified, not deleted and not {@code waiting}
   * for the server's answer; null when there are fewer.
   */
  MessageView nthLast(int back, Predicate<String> waiting) {
    List<Mine> own = new ArrayList<>(byKey.values());
    int left = back;
    for (int i = own.size() - 1; i >= 0; i--) {
      Mine candidate = own.get(i);
      if (!candidate.deleted && candidate.view.verified() && !waiting.test(candidate.view.baseKey())
          && --left == 0) {
        return candidate.view;
      }
    }
    return null;
  }

  /** Prints a message, or redraws its line. */
  private void show(Mine message) {
    if (message.line < 0) {
      message.line = screen.print(line(message));
    } else {
      screen.redraw(message.line, line(message));
    }
  }

  /** The message and its tick; a deleted message shows only that it was deleted. */
  private String line(Mine message) {
    String line = message.view.chatLine(message.deleted, screen.terminal());
    return message.deleted ? line : line + "  " + message.tick.render(screen.terminal());
  }
}
