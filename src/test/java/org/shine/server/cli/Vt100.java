package org.shine.server.cli;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * A small terminal for tests: it takes what a program writes to its terminal and keeps the screen a person would
 * see — the text of each row, with automatic wrapping at the right margin, scrolling, and the cursor movements and
 * erasures of ANSI/VT100 (CUU, CUD, CUF, CUB, CHA, CUP, ED, EL, CR, LF, BS). Colours and modes are taken and
 * ignored. It answers the questions a line editor asks (device attributes, a mode's state, the cursor position)
 * through {@code answer}, as a terminal emulator does.
 */
final class Vt100 {
  private final int columns;
  private final int rows;
  private final char[][] screen;
  private final Consumer<String> answer;
  private final StringBuilder pending = new StringBuilder();
  private int row;
  private int column;
  /** The cursor is past the last column: the next character goes to the start of the next row. */
  private boolean wrapNext;
  private int savedRow;
  private int savedColumn;

  Vt100(int columns, int rows, Consumer<String> answer) {
    this.columns = columns;
    this.rows = rows;
    this.answer = answer;
    this.screen = new char[rows][columns];
    for (char[] line : screen) {
      Arrays.fill(line, ' ');
    }
  }

  /** Takes bytes the program wrote (UTF-8; a sequence split between calls is kept until its end arrives). */
  synchronized void write(byte[] bytes, int length) {
    pending.append(new String(bytes, 0, length, StandardCharsets.UTF_8));
    int used = 0;
    while (used < pending.length()) {
      int next = step(used);
      if (next < 0) {
        break; // an escape sequence not complete yet
      }
      used = next;
    }
    pending.delete(0, used);
  }

  /** The rows of the screen, trailing blanks removed. */
  synchronized List<String> lines() {
    List<String> lines = new ArrayList<>();
    for (char[] line : screen) {
      lines.add(new String(line).stripTrailing());
    }
    return lines;
  }

  /** The screen as text: rows joined by line breaks, empty rows at the end left out. */
  synchronized String text() {
    List<String> lines = lines();
    int end = lines.size();
    while (end > 0 && lines.get(end - 1).isEmpty()) {
      end--;
    }
    return String.join("\n", lines.subList(0, end));
  }

  /**
   * The screen's rows joined without breaks, so that a wrapped line reads whole; each run of spaces is one (a row
   * that ends in spaces has them stripped, so the count across a wrap is not known).
   */
  synchronized String joined() {
    return String.join("", lines()).replaceAll(" +", " ");
  }

  private int step(int at) {
    char c = pending.charAt(at);
    if (c == '\u001b') {
      return escape(at);
    }
    switch (c) {
      case '\r' -> {
        column = 0;
        wrapNext = false;
      }
      case '\n' -> lineFeed();
      case '\b' -> {
        column = Math.max(0, column - 1);
        wrapNext = false;
      }
      case '\t' -> column = Math.min(columns - 1, (column / 8 + 1) * 8);
      case '\u0007' -> {
      }
      default -> {
        if (c >= ' ') {
          put(c);
        }
      }
    }
    return at + 1;
  }

  private void put(char c) {
    if (Character.isLowSurrogate(c)) {
      return; // the test texts are in the basic plane; a pair takes one cell
    }
    if (wrapNext) {
      column = 0;
      lineFeed();
      wrapNext = false;
    }
    screen[row][column] = c;
    if (column == columns - 1) {
      wrapNext = true;
    } else {
      column++;
    }
  }

  private void lineFeed() {
    wrapNext = false;
    if (row == rows - 1) {
      System.arraycopy(screen, 1, screen, 0, rows - 1);
      screen[rows - 1] = new char[columns];
      Arrays.fill(screen[rows - 1], ' ');
    } else {
      row++;
    }
  }

  /** An escape sequence from {@code at}; answers where the next one starts, or -1 when it is not complete. */
  private int escape(int at) {
    if (at + 1 >= pending.length()) {
      return -1;
    }
    char kind = pending.charAt(at + 1);
    if (kind == '[') {
      return csi(at);
    }
    if (kind == ']' || kind == 'P' || kind == '_') { // OSC, DCS, APC: up to BEL or ST
      for (int i = at + 2; i < pending.length(); i++) {
        if (pending.charAt(i) == '\u0007') {
          return i + 1;
        }
        if (pending.charAt(i) == '\u001b' && i + 1 < pending.length() && pending.charAt(i + 1) == '\\') {
          return i + 2;
        }
      }
      return -1;
    }
    if (kind == '7') {
      savedRow = row;
      savedColumn = column;
    } else if (kind == '8') {
      row = savedRow;
      column = savedColumn;
      wrapNext = false;
    } else if (kind == '(' || kind == ')' || kind == '#') {
      return at + 3 <= pending.length() ? at + 3 : -1;
    }
    return at + 2; // ESC =, ESC >, ESC M and the like
  }

  private int csi(int at) {
    int i = at + 2;
    while (i < pending.length() && (pending.charAt(i) < 0x40 || pending.charAt(i) > 0x7e)) {
      i++;
    }
    if (i >= pending.length()) {
      return -1;
    }
    String params = pending.substring(at + 2, i);
    char command = pending.charAt(i);
    boolean privateMode = params.startsWith("?") || params.startsWith(">") || params.startsWith("=");
    String plain = privateMode ? params.substring(1) : params;
    int n = first(plain, 1);
    switch (command) {
      case 'A' -> move(-Math.max(1, n), 0);
      case 'B' -> move(Math.max(1, n), 0);
      case 'C' -> move(0, Math.max(1, n));
      case 'D' -> move(0, -Math.max(1, n));
      case 'G' -> {
        column = clamp(n - 1, columns);
        wrapNext = false;
      }
      case 'H', 'f' -> {
        String[] parts = plain.split(";", -1);
        row = clamp(parts.length > 0 && !parts[0].isEmpty() ? Integer.parseInt(parts[0]) - 1 : 0, rows);
        column = clamp(parts.length > 1 && !parts[1].isEmpty() ? Integer.parseInt(parts[1]) - 1 : 0, columns);
        wrapNext = false;
      }
      case 'J' -> eraseDisplay(first(plain, 0));
      case 'K' -> eraseLine(first(plain, 0));
      case 'c' -> {
        if (!params.startsWith(">")) {
          answer.accept("\u001b[?62;22c");
        }
      }
      case 'n' -> {
        if (plain.equals("6")) {
          answer.accept("\u001b[" + (row + 1) + ";" + (column + 1) + "R");
        }
      }
      case 'p' -> {
        if (params.endsWith("$") && privateMode) { // DECRQM: this terminal knows no private mode
          answer.accept("\u001b[?" + plain.substring(0, plain.length() - 1) + ";0$y");
        }
      }
      case 's' -> {
        savedRow = row;
        savedColumn = column;
      }
      case 'u' -> {
        row = savedRow;
        column = savedColumn;
      }
      default -> {
        // m (colours), h and l (modes), r (scroll region) and the rest: nothing to draw
      }
    }
    return i + 1;
  }

  private void move(int down, int right) {
    row = clamp(row + down, rows);
    column = clamp(column + right, columns);
    wrapNext = false;
  }

  private void eraseDisplay(int mode) {
    if (mode == 0) {
      eraseLine(0);
      for (int r = row + 1; r < rows; r++) {
        Arrays.fill(screen[r], ' ');
      }
    } else if (mode == 1) {
      eraseLine(1);
      for (int r = 0; r < row; r++) {
        Arrays.fill(screen[r], ' ');
      }
    } else {
      for (char[] line : screen) {
        Arrays.fill(line, ' ');
      }
    }
  }

  private void eraseLine(int mode) {
    if (mode == 0) {
      Arrays.fill(screen[row], column, columns, ' ');
    } else if (mode == 1) {
      Arrays.fill(screen[row], 0, Math.min(columns, column + 1), ' ');
    } else {
      Arrays.fill(screen[row], ' ');
    }
  }

  private static int first(String params, int otherwise) {
    String head = params.split(";", -1)[0].replaceAll("[^0-9]", "");
    return head.isEmpty() ? otherwise : Integer.parseInt(head);
  }

  private static int clamp(int value, int size) {
    return Math.max(0, Math.min(size - 1, value));
  }
}
