package org.shine.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The chat's screen drawn on a {@link Vt100}: wrapped lines redrawn on their own rows, and the typed lines. */
class ChatScreenTest {
  private final AtomicInteger columns = new AtomicInteger(20);
  private final Vt100 terminal = new Vt100(20, 10, answer -> { });
  private final List<String> sent = new ArrayList<>();
  private final ChatScreen screen = new ChatScreen(new ChatScreen.Sink() {
    @Override
    public void line(String line) {
      write(line + "\r\n");
    }

    @Override
    public void controls(String controls) {
      write(controls);
    }

    @Override
    public void erase(String controls) {
      write(controls);
    }
  }, true, false, columns::get, () -> 10);

  private void write(String text) {
    sent.add(text);
    byte[] bytes = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    terminal.write(bytes, bytes.length);
  }

  @Test
  @DisplayName("a line of three rows is redrawn on its own three rows, the lines after it untouched")
  void wrappedLineRedrawnInPlace() {
    int wide = screen.print("a: " + "x".repeat(45) + " ..");
    screen.print("b: after it");
    screen.redraw(wide, "a: " + "x".repeat(45) + " ok");
    assertThat(terminal.text()).isEqualTo("a: " + "x".repeat(17) + "\n" + "x".repeat(20) + "\n" + "xxxxxxxx ok\n"
        + "b: after it");
  }

  @Test
  @DisplayName("an edit that takes fewer rows is redrawn in place: its old rows below are cleared, the lines after it"
      + " keep their rows")
  void shorterLineRedrawnInPlace() {
    int wide = screen.print("a: " + "x".repeat(45) + " ..");
    screen.print("b: after it");
    sent.clear();
    screen.redraw(wide, "a: short now (edited)");
    assertThat(terminal.text()).isEqualTo("a: short now (edited\n)\n\nb: after it");
    assertThat(String.join("", sent)).doesNotContain("\r\na: short");
    // and the next redraw of it still lands on its rows
    screen.redraw(wide, "a: shorter");
    assertThat(terminal.text()).isEqualTo("a: shorter\n\n\nb: after it");
  }

  @Test
  @DisplayName("wide characters count two columns; colours count none")
  void rows() {
    assertThat(ChatScreen.rowsOf("\u001b[96m" + "x".repeat(20) + "\u001b[0m", 20)).isEqualTo(1);
    assertThat(ChatScreen.rowsOf("x".repeat(21), 20)).isEqualTo(2);
    assertThat(ChatScreen.rowsOf("界".repeat(11), 20)).isEqualTo(2);
    assertThat(ChatScreen.rowsOf("one\ntwo", 20)).isEqualTo(2);
    assertThat(ChatScreen.rowsOf("", 20)).isEqualTo(1);
  }

  @Test
  @DisplayName("a line whose new form takes more rows, and any line from before the terminal changed width, is"
      + " printed anew instead of drawn over its neighbours")
  void printedAnewWhenRowsChange() {
    int first = screen.print("a: short");
    screen.print("b: next");
    screen.redraw(first, "a: short and now much longer");
    assertThat(terminal.text()).isEqualTo("a: short\nb: next\na: short and now muc\nh longer");

    int second = screen.print("c: one");
    columns.set(30);
    sent.clear();
    screen.redraw(second, "c: two");
    assertThat(String.join("", sent)).isEqualTo("c: two\r\n");
  }
}
