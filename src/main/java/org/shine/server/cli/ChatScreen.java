package org.shine.server.cli;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Objects;
import java.util.function.IntSupplier;
import org.jline.utils.AttributedString;

/**
 * The chat's output. On a terminal a line already printed is redrawn in place (ANSI cursor movement) while it is
 * still on the screen, and the echo of a typed line is replaced by the formatted message; piped, an update is
 * printed as a new line. Each line is counted in terminal rows (a line wider than the terminal wraps onto several,
 * wide characters take two columns), so a redraw lands on the line's own rows (a shorter form leaves the rows it no
 * longer takes empty); a line whose new form would take more rows, one scrolled off the screen, and every line
 * printed before the terminal changed width (it may have been reflowed) are printed anew instead.
 */
final class ChatScreen {
  /** Lines whose rows are remembered; older ones are printed anew when they change. */
  private static final int REMEMBERED = 1_000;

  /** Where the text goes: a plain stream, or a line editor that keeps its prompt below what is printed. */
  interface Sink {
    /** Prints {@code line} and a line break. */
    void line(String line);

    /**
     * Sends {@code controls}, which move the cursor, draw, and end with a line break on the row below the last
     * line printed (where the next line goes).
     */
    void controls(String controls);

    /** Sends {@code controls} that leave the cursor where the next line goes (only where no line editor runs). */
    void erase(String controls);
  }

  private final Sink out;
  private final boolean terminal;
  private final boolean echoes;
  private final IntSupplier columns;
  private final IntSupplier rows;
  /** Rows of the newest lines, newest last; {@code printed} lines in all. */
  private final Deque<Integer> lineRows = new ArrayDeque<>();
  private int printed;
  /** The first line printed at the present width; lines before it are not redrawn. */
  private int sinceResize;
  private int width;

  /**
   * {@code echoes}: the terminal echoes typed lines (a real one does without a line editor; a forced terminal mode
   * over pipes does not); {@code columns} and {@code rows}: the terminal's size now.
   */
  ChatScreen(Sink out, boolean terminal, boolean echoes, IntSupplier columns, IntSupplier rows) {
    this.out = Objects.requireNonNull(out);
    this.terminal = terminal;
    this.echoes = echoes;
    this.columns = Objects.requireNonNull(columns);
    this.rows = Objects.requireNonNull(rows);
    this.width = width();
  }

  boolean terminal() {
    return terminal;
  }

  /** Prints a line; answers its index for {@link #redraw}. */
  int print(String line) {
    noticeResize();
    out.line(line);
    lineRows.addLast(rowsOf(line, width));
    if (lineRows.size() > REMEMBERED) {
      lineRows.removeFirst();
    }
    return printed++;
  }

  /** Shows line {@code index} as {@code line}: in place when it is still on a terminal's screen, else anew. */
  void redraw(int index, String line) {
    noticeResize();
    int back = printed - index;
    if (!terminal || index < sinceResize || back > lineRows.size()) {
      print(line);
      return;
    }
    int up = 0;
    int own = 0;
    Iterator<Integer> newest = lineRows.descendingIterator();
    for (int i = 0; i < back; i++) {
      own = newest.next();
      up += own;
    }
    int drawn = rowsOf(line, width);
    if (up >= rows.getAsInt() - 1 || drawn > own) {
      print(line);
      return;
    }
    // up to the line's first row, clear it, draw (wrapping onto the line's other rows), clear the rest of the last
    // row and every row of the old form it no longer takes (they stay empty: the lines below keep their rows), then
    // down to where the next line goes
    StringBuilder controls = new StringBuilder().append("\u001b[").append(up).append("A\r\u001b[2K").append(line)
        .append("\u001b[K");
    for (int i = drawn; i < own; i++) {
      controls.append("\u001b[1B\r\u001b[2K");
    }
    int down = up - own;
    if (down > 0) {
      controls.append("\u001b[").append(down).append('B');
    }
    out.controls(controls.append("\r\n").toString());
  }

  /** Removes the terminal's echo of the line just typed (the message is printed formatted instead). */
  void eraseTypedLine(String typed) {
    if (terminal && echoes) {
      out.erase("\u001b[" + rowsOf(typed, width()) + "A\r\u001b[J");
    }
  }

  /** Terminal rows {@code text} takes at {@code width} columns: each of its lines at least one. */
  static int rowsOf(String text, int width) {
    int total = 0;
    for (String part : text.split("\n", -1)) {
      int columns = AttributedString.fromAnsi(part).columnLength();
      total += Math.max(1, (columns + width - 1) / width);
    }
    return total;
  }

  private void noticeResize() {
    int now = width();
    if (now != width) {
      width = now;
      sinceResize = printed;
    }
  }

  private int width() {
    return Math.max(10, columns.getAsInt());
  }
}
