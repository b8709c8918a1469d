package org.shine.server.util;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Foreign text in one log line: no line breaks or control characters survive, and its length is bounded. */
class LogTextTest {
  @Test
  @DisplayName("line breaks and control characters become \\uXXXX escapes; ordinary text stays")
  void escapesControls() {
    assertThat(LogText.escape("ok\n12:00 INFO forged line\r\u0007\u2028end")).isEqualTo(
        "ok\\u000a12:00 INFO forged line\\u000d\\u0007\\u2028end");
    assertThat(LogText.escape("plain text, ünïcode")).isEqualTo("plain text, ünïcode");
    assertThat(LogText.escape(null)).isEqualTo("null");
  }

  @Test
  @DisplayName("a long text is cut to MAX_CHARS and says how long it was")
  void cutsLongText() {
    String escaped = LogText.escape("x".repeat(100_000));

    assertThat(escaped).startsWith("x".repeat(LogText.MAX_CHARS)).endsWith("...(100000 chars)");
    assertThat(escaped.length()).isLessThan(LogText.MAX_CHARS + 20);
  }
}
