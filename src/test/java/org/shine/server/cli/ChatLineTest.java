package org.shine.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** What a typed chat line is: a message or one of the chat's commands. */
class ChatLineTest {

  @Test
  @DisplayName("plain lines are messages; // sends a leading slash")
  void messages() {
    assertThat(ChatLine.parse("hello /there")).isEqualTo(new ChatLine.Message("hello /there"));
    assertThat(ChatLine.parse("//etc/hosts is a file")).isEqualTo(new ChatLine.Message("/etc/hosts is a file"));
  }

  @Test
  @DisplayName("the commands, with their counts")
  void commands() {
    assertThat(ChatLine.parse("/help")).isEqualTo(new ChatLine.Help());
    assertThat(ChatLine.parse(" /quit ")).isEqualTo(new ChatLine.Quit());
    assertThat(ChatLine.parse("/edit fixed text")).isEqualTo(new ChatLine.Edit(1, "fixed text"));
    assertThat(ChatLine.parse("/edit 3 fixed text")).isEqualTo(new ChatLine.Edit(3, "fixed text"));
    assertThat(ChatLine.parse("/edit 1 3 apples")).isEqualTo(new ChatLine.Edit(1, "3 apples"));
    assertThat(ChatLine.parse("/delete")).isEqualTo(new ChatLine.Delete(1));
    assertThat(ChatLine.parse("/delete 2")).isEqualTo(new ChatLine.Delete(2));
    assertThat(ChatLine.parse("/history")).isEqualTo(new ChatLine.History(20));
    assertThat(ChatLine.parse("/history 200")).isEqualTo(new ChatLine.History(200));
  }

  @Test
  @DisplayName("a command written wrongly says how to write it, and is never sent")
  void mistakes() {
    assertThat(ChatLine.parse("/edit")).isInstanceOf(ChatLine.Unknown.class);
    assertThat(ChatLine.parse("/edit 2")).isInstanceOf(ChatLine.Unknown.class);
    assertThat(ChatLine.parse("/edit 5000 text")).isInstanceOf(ChatLine.Unknown.class);
    assertThat(ChatLine.parse("/delete last")).isInstanceOf(ChatLine.Unknown.class);
    assertThat(ChatLine.parse("/delete 0")).isInstanceOf(ChatLine.Unknown.class);
    assertThat(ChatLine.parse("/history 201")).isInstanceOf(ChatLine.Unknown.class);
    assertThat(((ChatLine.Unknown) ChatLine.parse("/shrug"))).extracting(ChatLine.Unknown::reason)
        .isEqualTo("/shrug is not a command (/help lists them; //shrug sends it as a message)");
  }
}
