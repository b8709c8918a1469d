package org.shine.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.shine.server.client.MessageBody;
import org.shine.server.client.ShineClient;
import org.shine.server.support.Eventually;
import org.shine.server.support.RefusingProxy;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/**
 * {@code client chat} as a user sees it, against real servers: alice chats on s1 with bob, whose only server is s2.
 * The chat runs with its input and output on pipes; {@code --terminal} renders as on a terminal (ANSI colours,
 * ticks redrawn in place), so the test reads exactly what a terminal would be sent. One test runs the real process
 * in a pseudo-terminal ({@code script}), where the chat finds the terminal by itself.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class ChatIT {
  private static final String GREY_TICK = "\u001b[90m✓\u001b[0m";
  private static final String LIGHT_TICK = "\u001b[96m✓\u001b[0m";
  private static final String DOUBLE_TICK = "\u001b[96m✓✓\u001b[0m";
  private TestWorld world;
  @TempDir
  Path dir;

  @BeforeEach
  void world(Vertx vertx) {
    world = TestWorld.on(vertx);
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("on a terminal a message sent while the peer's server is down shows a grey tick, a light one when"
      + " it returns, two when the peer reads it")
  void ticksOnATerminal() throws Exception {
    TestServer[] servers = world.servers("s1", "s2");
    TestServer s1 = servers[0];
    TestServer s2 = servers[1];
    TestUser alice = world.user("alice", TestWorld.routes(s1), s1, s2);
    TestUser bob = world.user("bob", TestWorld.routes(s2), s1, s2);
    Path aliceKey = write(alice);

    // GIVEN bob's only server is down
    s2.close();
    try (Cli.Running chat = Cli.start("client", "chat", "--key", aliceKey.toString(), "--server", s1.url(),
        "--peer", "bob", "--terminal")) {
      Eventually.until("the chat is open", 10_000, () -> chat.out().contains("-- chat with bob as alice"));

      // WHEN alice sends
      chat.type("are you there?");

      // THEN her server accepted it: one grey tick
      Eventually.until("a grey tick", 15_000, () -> chat.out().contains("alice: are you there?  " + GREY_TICK));
      assertThat(chat.out()).doesNotContain(LIGHT_TICK);

      // WHEN bob's server returns, the waiting message is delivered: the same line is redrawn with a light tick
      TestServer back = world.server("s2");
      Eventually.until("a light tick", 30_000, () -> chat.out().contains("alice: are you there?  " + LIGHT_TICK));
      String redrawn = chat.out().substring(chat.out().indexOf(GREY_TICK));
      assertThat(redrawn).as("redrawn in place: cursor up one line, line cleared")
          .contains("\u001b[1A\r\u001b[2K");

      // WHEN bob reads it, THEN two ticks
      ShineClient bobOnS2 = world.session(bob, back);
      JsonNode message = messages(bobOnS2, "alice").path(0);
      bobOnS2.sendReadReceipt(ShineClient.signReceipt("bob", bob.key(), "alice", message.get("baseKey").asText(),
          System.currentTimeMillis())).await();
      Eventually.until("two ticks", 15_000, () -> chat.out().contains("alice: are you there?  " + DOUBLE_TICK));
      String text = chat.out();
      assertThat(text.indexOf(GREY_TICK)).isLessThan(text.indexOf(LIGHT_TICK));
      assertThat(text.indexOf(LIGHT_TICK)).isLessThan(text.indexOf(DOUBLE_TICK));
    }
  }

  @Test
  @DisplayName("piped, the chat is plain text: history on open, the peer's messages as they arrive, each read"
      + " receipt sent, and state changes printed as words")
  void plainWhenPiped() throws Exception {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    TestUser bob = world.user("bob", s1);
    ShineClient bobSession = world.session(bob, s1);
    List<JsonNode> bobEvents = new CopyOnWriteArrayList<>();
    bobSession.onEvent(bobEvents::add);
    ShineClient.SignedPair opening = ShineClient.signPair("bob", bob.key(), "alice", System.currentTimeMillis(),
        ShineClient.randomNonce(), 0, MessageBody.encode("before you opened"));
    bobSession.sendPair(opening).await();

    try (Cli.Running chat = Cli.start("client", "chat", "--key", write(alice).toString(), "--server", s1.url(),
        "--peer", "bob")) {
      // THEN the history is shown, and what alice was shown gets a read receipt
      Eventually.until("history on open", 10_000, () -> chat.out().contains("bob: before you opened"));
      Eventually.until("bob hears that alice read it", 10_000, () -> bobEvents.stream()
          .anyMatch(e -> e.path("op").asText().equals("DmReadReceipt")));

      // WHEN bob writes while the chat is open, THEN it appears and is marked read too
      bobSession.sendPair(ShineClient.signPair("bob", bob.key(), "alice", System.currentTimeMillis(),
          ShineClient.randomNonce(), 0, "an old raw-text body".getBytes(StandardCharsets.UTF_8))).await();
      Eventually.until("the new message", 10_000, () -> chat.out().contains("bob: an old raw-text body"));
      Eventually.until("its receipt", 10_000, () -> bobEvents.stream()
          .filter(e -> e.path("op").asText().equals("DmReadReceipt")).count() == 2);

      // WHEN bob edits his first message, THEN its new text is shown, marked edited
      bobSession.sendPair(ShineClient.signPair("bob", bob.key(), "alice", opening.outgoing().createdAtMs(),
          opening.outgoing().nonce(), 1, MessageBody.encode("before you opened, edited"))).await();
      Eventually.until("the edit", 10_000, () -> chat.out().contains("bob: before you opened, edited (edited)"));

      // WHEN alice types, THEN her line shows the state in words, and bob's read shows as two ticks
      chat.type("hello from the chat");
      Eventually.until("delivered", 10_000, () -> chat.out().contains("alice: hello from the chat  [✓ delivered]"));
      assertThat(chat.out()).doesNotContain("\u001b[");
      JsonNode sent = messages(bobSession, "alice").path(0);
      bobSession.sendReadReceipt(ShineClient.signReceipt("bob", bob.key(), "alice", sent.get("baseKey").asText(),
          System.currentTimeMillis())).await();
      Eventually.until("read", 10_000, () -> chat.out().contains("alice: hello from the chat  [✓✓ read]"));
    }
  }

  @Test
  @DisplayName("the chat survives its server: connection lost, reconnected, and it goes on sending and receiving")
  void reconnects() throws Exception {
    TestServer first = world.server("s1");
    TestUser alice = world.user("alice", first);
    TestUser bob = world.user("bob", first);
    try (Cli.Running chat = Cli.start("client", "chat", "--key", write(alice).toString(), "--server", first.url(),
        "--peer", "bob")) {
      Eventually.until("the chat is open", 10_000, () -> chat.out().contains("-- chat with bob"));
      first.close();
      Eventually.until("it says so", 10_000, () -> chat.out().contains("-- connection lost to " + first.url()
          + "; reconnecting"));
      TestServer second = world.server("s1");
      Eventually.until("it is back", 20_000, () -> chat.out().contains("-- reconnected to " + first.url()));

      chat.type("after the restart");
      Eventually.until("sent", 10_000, () -> chat.out().contains("alice: after the restart  [✓ delivered]"));
      ShineClient bobSession = world.session(bob, second);
      bobSession.sendPair(ShineClient.signPair("bob", bob.key(), "alice", System.currentTimeMillis(),
          ShineClient.randomNonce(), 0, MessageBody.encode("welcome back"))).await();
      Eventually.until("received", 10_000, () -> chat.out().contains("bob: welcome back"));
    }
  }

  @Test
  @DisplayName("a chat with an unknown user ends at once with exit code 5; a message over the size of a message is"
      + " not sent, with its size and the limit, and the chat goes on")
  void refused() throws Exception {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    world.user("bob", s1);
    String key = write(alice).toString();
    Cli.Result unknown = Cli.run("client", "chat", "--key", key, "--server", s1.url(), "--peer", "nobody");
    assertThat(unknown.exitCode()).isEqualTo(CliFailure.NOT_FOUND);
    assertThat(unknown.err()).isEqualTo("error: there is no user nobody on " + s1.url() + "\n");

    try (Cli.Running chat = Cli.start("client", "chat", "--key", key, "--server", s1.url(), "--peer", "bob")) {
      Eventually.until("the chat is open", 10_000, () -> chat.out().contains("-- chat with bob"));
      chat.type("x".repeat(70_000));
      Eventually.until("refused", 10_000, () -> chat.out().contains("is 70,000 characters (70,017 bytes); a message"
          + " holds at most 65,536 bytes: shorten it or send it in parts"));
      chat.type("a short one");
      Eventually.until("the next one goes", 10_000, () -> chat.out().contains("alice: a short one  [✓ delivered]"));
    }
  }

  @Test
  @DisplayName("in a real pseudo-terminal the chat finds the terminal itself: a line wider than the terminal wraps,"
      + " its tick changes on its own rows and the text is on screen once; /help is the chat's, never sent")
  void realPseudoTerminal() throws Exception {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    TestUser bob = world.user("bob", s1);
    String wide = "startQ" + "x".repeat(90) + "Qfinish";
    try (PtyChat chat = ptyChat(40, 20, write(alice).toString(), s1)) {

      // WHEN alice sends a line of three rows and bob reads it
      chat.keys(wide + PtyChat.ENTER);
      Eventually.until("a light tick", 20_000, () -> chat.raw().contains(wide + "  " + LIGHT_TICK));
      ShineClient bobSession = world.session(bob, s1);
      JsonNode sent = messages(bobSession, "alice").path(0);
      bobSession.sendReadReceipt(ShineClient.signReceipt("bob", bob.key(), "alice", sent.get("baseKey").asText(),
          System.currentTimeMillis())).await();

      // THEN the screen shows it once, whole, with two ticks: each redraw landed on the line's own three rows
      Eventually.until("two ticks", 20_000, () -> chat.joined().contains(wide + " ✓✓"));
      assertThat(occurrences(chat.joined(), "startQ")).as(chat.screen()).isEqualTo(1);
      assertThat(occurrences(chat.joined(), "Qfinish")).as(chat.screen()).isEqualTo(1);
      assertThat(chat.screen()).as("the typed line's echo is gone").doesNotContain("> startQ");

      // WHEN alice asks for help, THEN the chat answers and bob gets nothing
      chat.keys("/help" + PtyChat.ENTER);
      Eventually.until("the help", 20_000, () -> chat.joined().contains("/edit [N] TEXT"));
      assertThat(messages(bobSession, "alice")).hasSize(1);

      chat.keys("/quit" + PtyChat.ENTER);
      assertThat(chat.exitCode(30)).isZero();
    }
  }

  @Test
  @DisplayName("in a pseudo-terminal, Ctrl-C right after Enter (one write) sends the line before leaving, exit 0;"
      + " Ctrl-C with a line typed and no Enter says it was not sent")
  void ctrlCRightAfterEnter() throws Exception {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    TestUser bob = world.user("bob", s1);
    String key = write(alice).toString();
    try (PtyChat chat = ptyChat(80, 24, key, s1)) {
      chat.keys("last words" + PtyChat.ENTER + PtyChat.CTRL_C);
      assertThat(chat.exitCode(60)).as(chat.screen()).isZero();
    }
    JsonNode messages = messages(world.session(bob, s1), "alice");
    assertThat(messages).hasSize(1);
    assertThat(MessageView.textOf(messages.get(0).path("blobB64").asText())).isEqualTo("last words");

    try (PtyChat chat = ptyChat(80, 24, key, s1)) {
      chat.keys("half a thought" + PtyChat.CTRL_C);
      assertThat(chat.exitCode(60)).as(chat.screen()).isZero();
      assertThat(chat.screen()).contains("-- not sent (Enter was not pressed): \"half a thought\"");
    }
    assertThat(messages(world.session(bob, s1), "alice")).hasSize(1);
  }

  @Test
  @DisplayName("in a pseudo-terminal a pasted line of 70,000 characters arrives whole (no 4,095-character cut) and"
      + " is refused before signing, with its size and the limit; the chat goes on")
  void longPaste() throws Exception {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    TestUser bob = world.user("bob", s1);
    try (PtyChat chat = ptyChat(80, 24, write(alice).toString(), s1)) {
      chat.keys("p".repeat(70_000) + PtyChat.ENTER);
      Eventually.until("refused", 60_000, () -> chat.joined().contains("is 70,000 characters (70,017 bytes); a"
          + " message holds at most 65,536 bytes"));
      chat.keys("a short one" + PtyChat.ENTER);
      Eventually.until("the next one goes", 20_000, () -> chat.raw().contains("alice: a short one  "
          + LIGHT_TICK));
      chat.keys("/quit" + PtyChat.ENTER);
      assertThat(chat.exitCode(30)).isZero();
    }
    assertThat(messages(world.session(bob, s1), "alice")).hasSize(1);
  }

  @Test
  @DisplayName("the chat's commands: /edit and /delete change the user's own messages in place, /history shows"
      + " them with keys, // sends a leading slash, an unknown command is said and never sent")
  void commands() throws Exception {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    TestUser bob = world.user("bob", s1);
    ShineClient bobSession = world.session(bob, s1);
    try (Cli.Running chat = Cli.start("client", "chat", "--key", write(alice).toString(), "--server", s1.url(),
        "--peer", "bob")) {
      Eventually.until("the chat is open", 10_000, () -> chat.out().contains("-- chat with bob"));
      chat.type("first");
      chat.type("second");
      Eventually.until("both sent", 10_000, () -> chat.out().contains("alice: second  [✓ delivered]"));

      // WHEN alice edits her last message and deletes the one before it
      chat.type("/edit second, corrected");
      Eventually.until("the edit", 10_000, () -> chat.out().contains("alice: second, corrected (edited)"));
      chat.type("/delete 2");
      Eventually.until("the delete", 10_000, () -> chat.out().contains("alice: (message deleted)"));

      // THEN bob has the new text, and alice's copy of the first is deleted
      // (both were typed within one millisecond or two: found by their text, not by their order)
      Eventually.until("bob has the edit", 20_000, () -> java.util.stream.StreamSupport.stream(
          messages(bobSession, "alice").spliterator(), false).anyMatch(m -> m.path("revision").asInt() == 1
              && MessageView.textOf(m.path("blobB64").asText()).equals("second, corrected")));
      JsonNode mine = messages(world.session(alice, s1), "bob");
      assertThat(mine).hasSize(2);
      for (JsonNode entry : mine) {
        boolean first = entry.path("revision").asInt() == 0;
        assertThat(entry.path("deleted").asBoolean()).as(entry.toString()).isEqualTo(first);
        if (!first) {
          assertThat(MessageView.textOf(entry.path("blobB64").asText())).isEqualTo("second, corrected");
        }
      }

      // WHEN alice asks for the history, THEN the deleted one shows without its text
      chat.type("/history 5");
      Eventually.until("the history", 10_000, () -> chat.out().contains("-- end of history"));
      String history = chat.out().substring(chat.out().indexOf("-- the last 2 messages with bob:"));
      assertThat(history).contains("(message deleted)", "second, corrected (edited)").doesNotContain("first");

      // WHEN alice types a line with a leading slash and an unknown command
      chat.type("//slash at the start");
      chat.type("/shrug");
      chat.type("/help");
      Eventually.until("the slash line", 10_000, () -> chat.out().contains("alice: /slash at the start  [✓"));
      assertThat(chat.out()).contains("-- /shrug is not a command (/help lists them; //shrug sends it as a message)",
          "-- /quit ");
      assertThat(messages(bobSession, "alice")).hasSize(3);
    }
  }

  @Test
  @DisplayName("a chat stopped (Ctrl-C) right after a line was typed sends it first; one whose server never answers"
      + " says which message was not confirmed and ends with exit code 3")
  void leavingWaitsForTheServer() throws Exception {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    TestUser bob = world.user("bob", s1);
    String key = write(alice).toString();
    // --terminal prints the line as soon as the chat has taken it, before the server answers: the stop comes then,
    // not at a moment left to luck (a pipe gives no other sign that the line was read)
    Cli.Running chat = Cli.start("client", "chat", "--key", key, "--server", s1.url(), "--peer", "bob",
        "--terminal");
    Eventually.until("the chat is open", 10_000, () -> chat.out().contains("-- chat with bob"));
    chat.type("just before leaving");
    Eventually.until("the chat took the line", 10_000, () -> chat.out().contains("alice: just before leaving"));
    chat.close();
    assertThat(chat.exitCode()).isZero();
    JsonNode messages = messages(world.session(bob, s1), "alice");
    assertThat(messages).hasSize(1);

    Cli.Running unanswered = Cli.start("client", "chat", "--key", key, "--server", s1.url(), "--peer", "bob");
    Eventually.until("the chat is open", 10_000, () -> unanswered.out().contains("-- chat with bob"));
    s1.close();
    Eventually.until("it says so", 10_000, () -> unanswered.out().contains("-- connection lost"),
        unanswered::out);
    unanswered.type("into the void");
    unanswered.type("/quit");
    assertThat(unanswered.exitCode()).isEqualTo(CliFailure.UNREACHABLE);
    assertThat(unanswered.out()).contains("-- waiting for your server to accept 1 message before leaving",
        "-- not confirmed by your server: \"into the void\" (client history --peer bob shows whether it arrived)");
  }

  @Test
  @DisplayName("a history refused while the chat opens (a server shutting down answers 503) is said, and the chat"
      + " goes on")
  void historyRefusedAtOpening() throws Exception {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    TestUser bob = world.user("bob", s1);
    try (RefusingProxy draining = RefusingProxy.start(world.vertx(), s1.port(), "GetDirectMessages", 1)) {
      Cli.Running chat = Cli.start("client", "chat", "--key", write(alice).toString(), "--server", draining.url(),
          "--peer", "bob");
      Eventually.until("it says so", 10_000, () -> chat.out().contains("-- could not show the history: "),
          chat::out);
      assertThat(draining.refused()).isEqualTo(1);
      chat.type("still here");
      chat.type("/quit");
      assertThat(chat.exitCode()).isZero();
      assertThat(messages(world.session(bob, s1), "alice")).hasSize(1);
    }
  }

  /** The key's owner chatting with bob on {@code server}, in a pseudo-terminal, once the prompt shows. */
  private PtyChat ptyChat(int columns, int rows, String key, TestServer server) throws IOException {
    PtyChat chat = PtyChat.start(columns, rows, "client", "chat", "--key", key, "--server", server.url(), "--peer",
        "bob");
    world.onClose(chat::close);
    Eventually.until("the prompt", 60_000, () -> chat.screen().contains("-- chat with bob")
        && chat.screen().lines().anyMatch(line -> line.startsWith(">")));
    return chat;
  }

  /** The newest page of {@code session}'s history with {@code peer}, newest first. */
  private static JsonNode messages(ShineClient session, String peer) {
    return session.request("GetDirectMessages", ShineClient.object().put("peer", peer)).await().path("messages");
  }

  private static int occurrences(String text, String part) {
    int count = 0;
    for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) {
      count++;
    }
    return count;
  }

  @Test
  @DisplayName("/quit ends the chat with exit code 0")
  void quit() throws Exception {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    world.user("bob", s1);
    Cli.Running chat = Cli.start("client", "chat", "--key", write(alice).toString(), "--server", s1.url(), "--peer",
        "bob");
    Eventually.until("the chat is open", 10_000, () -> chat.out().contains("-- chat with bob"));
    chat.type("/quit");
    Eventually.until("it ends", 10_000, chat::exited);
    assertThat(chat.exitCode()).isZero();
  }

  private Path write(TestUser user) throws IOException {
    Path file = dir.resolve(user.login() + ".key");
    user.key().write(file);
    return file;
  }
}
