package org.shine.server.cli;

import java.io.PrintWriter;
import java.util.Objects;

/**
 * The chat's output. On a terminal a line already printed is redrawn in place (ANSI cursor movement) while it is
 * still on the screen, and the echo of a typed line is replaced by the formatted message; piped, an update is
 * printed as a new line. Lines are counted on the assumption that none wraps (a long line's update then lands a
 * row off; the next redraw of a later line is right again).
 */
final class ChatScreen {
  private final PrintWriter out;
  private final boolean terminal;
  private final boolean echoes;
  private final int rows;
  private int printed;

  /**
   * {@code echoes}: the terminal echoes typed lines (a real one does; a forced terminal mode over pipes does not);
   * {@code rows}: the terminal's height (lines further up cannot be redrawn).
   */
  ChatScreen(PrintWriter out, boolean terminal, boolean echoes, int rows) {
    this.out = Objects.requireNonNull(out);
    this.terminal = terminal;
    this.echoes = echoes;
    this.rows = Math.max(2, rows);
  }

  boolean terminal() {
    return terminal;
  }

  /** Prints a line; answers its index for {@link #redraw}. */
  int print(String line) {
    out.println(line);
    out.flush();
    return printed++;
  }

  /** Shows line {@code index} as {@code line}: in place when it is still on a terminal's screen, else anew. */
  void redraw(int index, String line) {
    int up = printed - index;
    if (!terminal || up >= rows) {
      print(line);
      return;
    }
    out.print("\u001b[" + up + "A\r\u001b[2K" + line + "\u001b[" + up + "B\r");
    out.flush();
  }

  /** Removes the terminal's echo of the line just typed (the message is printed formatted instead). */
  void eraseTypedLine() {
    if (terminal && echoes) {
      out.print("\u001b[1A\r\u001b[2K");
      out.flush();
    }
  }
}
