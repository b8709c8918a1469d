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
      JsonNode message = bobOnS2.request("GetDirectMessages", ShineClient.object().put("peer", "alice")).await()
          .at("/messages/0");
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
      JsonNode sent = bobSession.request("GetDirectMessages", ShineClient.object().put("peer", "alice")).await()
          .at("/messages/0");
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
  @DisplayName("a chat with an unknown user ends at once with exit code 5; a message the server refuses is reported"
      + " not sent, with the reason, and the chat goes on")
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
      Eventually.until("refused", 10_000, () -> chat.out().contains("the server answered 413"));
      chat.type("a short one");
      Eventually.until("the next one goes", 10_000, () -> chat.out().contains("alice: a short one  [✓ delivered]"));
    }
  }

  @Test
  @DisplayName("in a real pseudo-terminal (script) the chat finds the terminal itself: the typed line's echo is"
      + " replaced by the message, whose tick turns light in place")
  void realPseudoTerminal() throws Exception {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    world.user("bob", s1);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String command = String.join(" ", quote(java), "-cp", quote(System.getProperty("java.class.path")),
        "org.shine.server.Main", "client", "chat", "--key", quote(write(alice).toString()), "--server", s1.url(),
        "--peer", "bob");
    ProcessBuilder builder = new ProcessBuilder("script", "-q", "-e", "-c", command, "/dev/null")
        .redirectErrorStream(true);
    builder.environment().put("TERM", "xterm");
    builder.environment().remove("NO_COLOR");
    Process process = builder.start();
    world.onClose(process::destroyForcibly);
    StringBuffer screen = new StringBuffer();
    Thread reader = new Thread(() -> {
      try (var in = process.getInputStream()) {
        byte[] buffer = new byte[4096];
        for (int n; (n = in.read(buffer)) > 0; ) {
          screen.append(new String(buffer, 0, n, StandardCharsets.UTF_8));
        }
      } catch (IOException e) {
        screen.append("\n(read failed: ").append(e).append(')');
      }
    });
    reader.setDaemon(true);
    reader.start();
    var keyboard = process.getOutputStream();
    Eventually.until("the chat is open", 30_000, () -> screen.toString().contains("-- chat with bob"));

    keyboard.write("hello over a pty\n".getBytes(StandardCharsets.UTF_8));
    keyboard.flush();
    Eventually.until("a light tick", 20_000, () -> screen.toString().contains("alice: hello over a pty  "
        + LIGHT_TICK));
    String text = screen.toString();
    int echo = text.indexOf("hello over a pty");
    int erased = text.indexOf("\u001b[1A\r\u001b[2K", echo);
    assertThat(echo).as(text).isNotNegative();
    assertThat(erased).as("the echo of the typed line is erased").isGreaterThan(echo);
    assertThat(text.indexOf("alice: hello over a pty", erased)).isGreaterThan(erased);

    keyboard.write("/quit\n".getBytes(StandardCharsets.UTF_8));
    keyboard.flush();
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).isZero();
  }

  private static String quote(String word) {
    return "'" + word.replace("'", "'\\''") + "'";
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
