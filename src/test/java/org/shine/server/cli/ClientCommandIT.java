package org.shine.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.shine.server.client.BodyReader;
import org.shine.server.client.MessageBody;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.BodyCipher;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.Hpke;
import org.shine.server.dm.KeyFile;
import org.shine.server.support.Eventually;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/**
 * Every {@code client} subcommand end to end against a real server, as a user types it: readable output by default,
 * {@code --json} for scripts, and each failure one line on stderr with its documented exit code.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class ClientCommandIT {
  private static TestWorld world;
  private static TestServer server;
  private static String url;
  @TempDir
  static Path dir;
  private static String alice;
  private static String bob;

  @BeforeAll
  static void start(Vertx vertx) throws IOException {
    world = TestWorld.on(vertx);
    server = world.server("s1");
    url = server.url();
    alice = key("alice");
    bob = key("bob");
    for (String key : List.of(alice, bob)) {
      Cli.Result registered = Cli.run("client", "register", "--key", key, "--server", url);
      assertThat(registered.exitCode()).as(registered.err()).isZero();
      assertThat(registered.out()).contains("registered ").contains("on s1 (" + url + "), card version 1");
    }
  }

  @AfterAll
  static void stop() {
    world.close();
  }

  @Test
  @DisplayName("send answers with the tick and the key, history shows the conversation oldest first with ticks")
  void sendAndHistory() {
    Cli.Result sent = Cli.run("client", "send", "--key", alice, "--server", url, "--to", "bob", "--text", "hello bob");
    assertThat(sent.exitCode()).as(sent.err()).isZero();
    assertThat(sent.out()).startsWith("[✓ delivered] to bob: hello bob  (alice|bob|");
    Cli.run("client", "send", "--key", alice, "--server", url, "--to", "bob", "--text", "second");

    Cli.Result history = Cli.run("client", "history", "--key", alice, "--server", url, "--peer", "bob");
    assertThat(history.exitCode()).isZero();
    List<String> lines = history.out().lines().toList();
    int first = indexOf(lines, "alice → bob  [✓ delivered]  hello bob");
    int second = indexOf(lines, "alice → bob  [✓ delivered]  second");
    assertThat(first).as(history.out()).isNotNegative().isLessThan(second);

    Cli.Result bobs = Cli.run("client", "history", "--key", bob, "--server", url, "--peer", "alice");
    assertThat(bobs.out()).contains("alice → bob  hello bob  (alice|bob|");
  }

  @Test
  @DisplayName("--json prints the server's answer and history entries as JSON lines, the text decoded")
  void json() throws Exception {
    Cli.Result sent = Cli.run("client", "send", "--key", alice, "--server", url, "--to", "bob", "--text", "as json",
        "--json");
    JsonNode answer = Json.MAPPER.readTree(sent.out());
    assertThat(answer.get("deliveryState").asText()).isEqualTo("delivered");
    String baseKey = answer.get("baseKey").asText();

    Cli.Result history = Cli.run("client", "history", "--key", bob, "--server", url, "--peer", "alice", "--json");
    JsonNode entry = null;
    for (String line : history.out().lines().toList()) {
      JsonNode parsed = Json.MAPPER.readTree(line);
      if (parsed.get("baseKey").asText().equals(baseKey)) {
        entry = parsed;
      }
    }
    assertThat(entry).as(history.out()).isNotNull();
    assertThat(entry.get("text").asText()).isEqualTo("as json");
    assertThat(entry.get("encrypted").asBoolean()).isTrue();
    DmContainer copy = DmCodec.parse(Base64.getDecoder().decode(entry.get("blobB64").asText()));
    assertThat(BodyCipher.isEncrypted(copy.body())).as("bob's card has an encryption key: his copy is sealed").isTrue();
    byte[] body = BodyCipher.openBody(copy.body(), BodyCipher.PrivateKeys.of(KeyFile.read(Path.of(bob))
        .encryptionKeys().stream().map(Hpke.KeyPair::privateKey).toList()), copy.baseKey(), copy.kind(), 0);
    assertThat(Json.MAPPER.readTree(new String(body, StandardCharsets.UTF_8)))
        .as("the sealed body is PROTOCOL §3 v2 JSON").isEqualTo(Json.MAPPER.readTree("{\"v\":1,\"text\":\"as json\"}"));
  }

  @Test
  @DisplayName("a message with an older raw-text body is shown as its text")
  void rawTextBody() throws Exception {
    ShineClient session = world.anonymous(server);
    session.login("alice", KeyFile.read(Path.of(alice))).await();
    session.sendText("alice", KeyFile.read(Path.of(alice)), "bob", "plain old text").await();
    Cli.Result history = Cli.run("client", "history", "--key", bob, "--server", url, "--peer", "alice");
    assertThat(history.out()).contains("alice → bob  plain old text [sent unencrypted]  (");
    assertThat(MessageBody.text("plain old text".getBytes(StandardCharsets.UTF_8))).isEqualTo("plain old text");
  }

  @Test
  @DisplayName("edit sends a new revision; history shows the new text marked edited")
  void edit() throws IOException {
    String baseKey = sendJson("before the edit");
    Cli.Result edited = Cli.run("client", "edit", "--key", alice, "--server", url, "--message", baseKey,
        "--text", "after the edit");
    assertThat(edited.exitCode()).as(edited.err()).isZero();
    assertThat(edited.out()).contains("edited (revision 1) to bob: after the edit");

    Cli.Result history = Cli.run("client", "history", "--key", bob, "--server", url, "--peer", "alice");
    assertThat(history.out()).contains("after the edit (edited)  (" + baseKey + ")")
        .doesNotContain("before the edit");

    Cli.Result notMine = Cli.run("client", "edit", "--key", bob, "--server", url, "--message", baseKey,
        "--text", "x");
    assertThat(notMine.exitCode()).isEqualTo(CliFailure.USAGE);
    assertThat(notMine.err()).contains("only the author edits a message");
  }

  @Test
  @DisplayName("read sends a receipt: the sender's history shows two ticks")
  void read() throws IOException {
    String baseKey = sendJson("please read me");
    Cli.Result read = Cli.run("client", "read", "--key", bob, "--server", url, "--message", baseKey);
    assertThat(read.exitCode()).as(read.err()).isZero();
    assertThat(read.out()).contains("read receipt for " + baseKey + " sent to alice");
    Eventually.until("alice's copy shows read", 10_000, () -> Cli.run("client", "history", "--key", alice,
        "--server", url, "--peer", "bob").out().contains("[✓✓ read]  please read me"));
  }

  @Test
  @DisplayName("delete tombstones the user's own copy: it stays in history marked deleted")
  void delete() throws IOException {
    String baseKey = sendJson("delete me");
    Cli.Result deleted = Cli.run("client", "delete", "--key", alice, "--server", url, "--message", baseKey);
    assertThat(deleted.exitCode()).as(deleted.err()).isZero();
    assertThat(deleted.out()).contains("deleted your copy of " + baseKey);
    assertThat(Cli.run("client", "history", "--key", alice, "--server", url, "--peer", "bob").out())
        .as("a deleted message shows as deleted, never with its text")
        .contains("(message deleted)  (" + baseKey + ")").doesNotContain("delete me");
    assertThat(Cli.run("client", "history", "--key", bob, "--server", url, "--peer", "alice").out())
        .as("the other party's copy is untouched").contains("delete me  (" + baseKey + ")");
  }

  @Test
  @DisplayName("settings set takes JSON or a plain string; get prints one or all; an unknown one is exit code 5")
  void settings() throws IOException {
    assertThat(Cli.run("client", "settings", "set", "--key", alice, "--server", url, "theme", "dark").out())
        .contains("theme = \"dark\"");
    assertThat(Cli.run("client", "settings", "set", "--key", alice, "--server", url, "fontSize", "14").exitCode())
        .isZero();
    assertThat(Cli.run("client", "settings", "get", "--key", alice, "--server", url, "theme").out().strip())
        .isEqualTo("\"dark\"");
    assertThat(Cli.run("client", "settings", "get", "--key", alice, "--server", url).out())
        .contains("theme = \"dark\"").contains("fontSize = 14");
    JsonNode all = Json.MAPPER.readTree(Cli.run("client", "settings", "get", "--key", alice, "--server", url,
        "--json").out());
    assertThat(all.get("fontSize").asInt()).isEqualTo(14);
    Cli.Result missing = Cli.run("client", "settings", "get", "--key", alice, "--server", url, "nothing");
    assertThat(missing.exitCode()).isEqualTo(CliFailure.NOT_FOUND);
  }

  @Test
  @DisplayName("on a server in invite mode, register fails with 403 INVITE_REQUIRED and works with --invite and a code"
      + " from admin invite; settings get pages through settings that no one answer holds")
  void inviteAndPagedSettings(Vertx vertx) throws IOException {
    int adminPort = TestServer.freePort();
    // a server of its own: no peers (s1, which does not know it, would refuse its logins)
    TestServer invites = world.server("inv", TestServer.merge(TestServer.json("{\"directory\": {\"registration\":"
        + " \"invite\"}, \"limits\": {\"maxResponseBytes\": 262144}, \"peers\": []}"), TestServer.admin(adminPort)));
    String dora = key("dora");

    assertOneLine(Cli.run("client", "register", "--key", dora, "--server", invites.url()), CliFailure.FAILED,
        "403 INVITE_REQUIRED");
    Cli.Result invite = Cli.run("admin", "--url", "http://127.0.0.1:" + adminPort, "invite");
    assertThat(invite.exitCode()).as(invite.err()).isZero();
    String code = invite.out().lines().findFirst().orElseThrow();
    Cli.Result registered = Cli.run("client", "register", "--key", dora, "--server", invites.url(), "--invite",
        code);
    assertThat(registered.exitCode()).as(registered.err()).isZero();

    // 80 settings of 4 KB: about 330 KB, more than one answer of 256 KB holds
    ShineClient session = ShineClient.connect(vertx, invites.url()).await();
    session.login("dora", KeyFile.read(Path.of(dora))).await();
    for (int i = 0; i < 80; i++) {
      session.request("SetUserSetting", ShineClient.object().put("key", String.format("s%02d", i))
          .put("value", "x".repeat(4_000))).await();
    }
    assertThat(session.request("GetUserSettings", ShineClient.object()).await().has("nextKey")).isTrue();
    session.close().await();
    JsonNode all = Json.MAPPER.readTree(Cli.run("client", "settings", "get", "--key", dora, "--server",
        invites.url(), "--json").out());
    assertThat(all.size()).isEqualTo(80);
    assertThat(all.get("s79").asText()).hasSize(4_000);
  }

  @Test
  @DisplayName("failures are one line with their exit code: unknown user 5, wrong key 4, server down 3, bad key 6,"
      + " bad input 2")
  void failures() throws IOException {
    Cli.Result unknown = Cli.run("client", "send", "--key", alice, "--server", url, "--to", "nobody", "--text", "x");
    assertOneLine(unknown, CliFailure.NOT_FOUND, "404 USER_NOT_FOUND");

    Path impostor = dir.resolve("impostor.key");
    KeyFile.generate("bob").write(impostor);
    Cli.Result wrongKey = Cli.run("client", "send", "--key", impostor.toString(), "--server", url, "--to", "alice",
        "--text", "x");
    assertOneLine(wrongKey, CliFailure.LOGIN_REFUSED, "refused the login of bob: the key does not match");

    Path stranger = dir.resolve("stranger.key");
    KeyFile.generate("stranger").write(stranger);
    assertOneLine(Cli.run("client", "history", "--key", stranger.toString(), "--server", url, "--peer", "bob"),
        CliFailure.NOT_FOUND, "stranger is not registered on " + url);

    String down = "ws://127.0.0.1:" + TestServer.freePort() + "/ws";
    assertOneLine(Cli.run("client", "send", "--key", alice, "--server", down, "--to", "bob", "--text", "x"),
        CliFailure.UNREACHABLE, "cannot reach " + down);

    Path garbage = dir.resolve("garbage.key");
    Files.writeString(garbage, "{\"privateKeyB64\": tru");
    assertOneLine(Cli.run("client", "send", "--key", garbage.toString(), "--server", url, "--to", "bob", "--text",
        "x"), CliFailure.BAD_KEY_FILE, garbage + " is not a key file");
    assertOneLine(Cli.run("client", "send", "--key", dir.resolve("absent.key").toString(), "--server", url, "--to",
        "bob", "--text", "x"), CliFailure.BAD_KEY_FILE, "does not exist");

    assertOneLine(Cli.run("client", "read", "--key", bob, "--server", url, "--message", "not-a-key"),
        CliFailure.USAGE, "--message takes a message key");
    assertOneLine(Cli.run("client", "send", "--key", alice, "--server", "127.0.0.1:7101", "--to", "bob", "--text",
        "x"), CliFailure.USAGE, "--server takes the server's WebSocket URL");
    // an empty text is nothing to send, as an empty line of the chat (issue 19)
    assertOneLine(Cli.run("client", "send", "--key", alice, "--server", url, "--to", "bob", "--text", ""),
        CliFailure.USAGE, "--text is empty");
    assertOneLine(Cli.run("client", "edit", "--key", alice, "--server", url, "--message", "alice|bob|1|2|2",
        "--text", "  "), CliFailure.USAGE, "--text is empty: to take a message back, use client delete");
  }

  @Test
  @DisplayName("listen prints readable events; after its server restarts it says connection lost and reconnects")
  void listenReconnects() throws IOException {
    try (TestWorld local = world.child()) {
      listenAcrossRestart(local);
    }
  }

  private static void listenAcrossRestart(TestWorld local) throws IOException {
    // a server of its own, as inv is
    TestServer first = local.server("s9", TestServer.json("{\"peers\": []}"));
    String own = first.url();
    String carol = key("carol");
    String dave = key("dave");
    Cli.run("client", "register", "--key", carol, "--server", own);
    Cli.run("client", "register", "--key", dave, "--server", own);
    TestServer second;
    try (Cli.Running listen = Cli.start("client", "listen", "--key", dave, "--server", own)) {
      Eventually.until("listening", 10_000, () -> listen.err().contains("listening as dave"));
      Cli.run("client", "send", "--key", carol, "--server", own, "--to", "dave", "--text", "first");
      Eventually.until("the message is printed", 10_000, () -> listen.out().contains("carol → dave: first  (carol|"));

      // WHEN the server stops and comes back on the same port
      first.close();
      Eventually.until("it says the connection is lost", 10_000,
          () -> listen.err().contains("connection lost to " + own + "; reconnecting"));
      second = local.server("s9");
      Eventually.until("it reconnects", 20_000, () -> listen.err().contains("reconnected to " + own));

      // THEN new events reach it again
      Cli.run("client", "send", "--key", carol, "--server", second.url(), "--to", "dave", "--text", "second");
      Eventually.until("the next message is printed", 10_000, () -> listen.out().contains("carol → dave: second"));
    }

    try (Cli.Running json = Cli.start("client", "listen", "--key", dave, "--server", own, "--json",
        "--no-reconnect")) {
      Eventually.until("listening", 10_000, () -> json.err().contains("listening as dave"));
      Cli.run("client", "send", "--key", carol, "--server", own, "--to", "dave", "--text", "third");
      Eventually.until("a JSON line", 10_000, () -> json.out().contains("\"text\":\"third\""));
      JsonNode event = Json.MAPPER.readTree(json.out().lines().filter(l -> l.contains("third")).findFirst()
          .orElseThrow());
      assertThat(event.get("op").asText()).isEqualTo("IncomingDirectMessage");
      second.close();
      Eventually.until("--no-reconnect exits on a lost connection", 10_000, json::exited);
      assertThat(json.exitCode()).isEqualTo(CliFailure.UNREACHABLE);
      assertThat(json.err()).contains("error: connection lost to " + own);
    }
  }

  @Test
  @DisplayName("adapter run: a server down at start is exit code 3 in one line, a user it does not know exit code 5,"
      + " and a user of the server gets its events (the server given by its ws:// URL)")
  void adapter() throws Exception {
    String down = "http://127.0.0.1:" + TestServer.freePort();
    assertOneLine(Cli.run("adapter", "run", "--server", down, "--key", bob, "--inbox",
        dir.resolve("down-inbox.db").toString()), CliFailure.UNREACHABLE, "cannot reach the hub at " + down);

    Path stranger = dir.resolve("nobody-here.key");
    KeyFile.generate("nobodyhere").write(stranger);
    Cli.Result refused = Cli.run("adapter", "run", "--server", url, "--key", stranger.toString(), "--inbox",
        dir.resolve("stranger-inbox.db").toString());
    assertThat(refused.exitCode()).as(refused.err()).isEqualTo(CliFailure.NOT_FOUND);
    assertThat(refused.err()).startsWith("error: the hub at ").contains("refused the login of nobodyhere");
    assertThat(refused.err().lines().count()).isEqualTo(1);

    Path events = dir.resolve("events.jsonl");
    BodyReader bobsReader = new BodyReader("bob", KeyFile.read(Path.of(bob)).encryptionKeys(), login -> false);
    try (Cli.Running adapter = Cli.start("adapter", "run", "--server", url, "--key", bob, "--inbox",
        dir.resolve("bob-inbox.db").toString(), "--out", events.toString(), "--wait", "1", "--status-every", "0")) {
      Eventually.until("the adapter runs", 10_000, () -> adapter.err().contains("adapter receiving for bob"));
      Cli.run("client", "send", "--key", alice, "--server", url, "--to", "bob", "--text", "over the hub");
      Eventually.until("the event is written", 15_000, () -> readQuietly(events).lines().anyMatch(line ->
          line.contains("IncomingDirectMessage")
              && MessageView.textOf(blobOf(line), bobsReader).equals("over the hub")));
    }
  }

  private static String readQuietly(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file) : "";
    } catch (IOException e) {
      return "";
    }
  }

  private static String blobOf(String eventLine) {
    try {
      return Json.MAPPER.readTree(eventLine).at("/payload/blobB64").asText();
    } catch (IOException e) {
      return "";
    }
  }

  private static String sendJson(String text) throws IOException {
    Cli.Result sent = Cli.run("client", "send", "--key", alice, "--server", url, "--to", "bob", "--text", text,
        "--json");
    assertThat(sent.exitCode()).as(sent.err()).isZero();
    return Json.MAPPER.readTree(sent.out()).get("baseKey").asText();
  }

  private static void assertOneLine(Cli.Result result, int exitCode, String text) {
    assertThat(result.exitCode()).as(result.err()).isEqualTo(exitCode);
    assertThat(result.err().lines().toList()).as("one line, no stack trace").hasSize(1);
    assertThat(result.err()).startsWith("error: ").contains(text).doesNotContain("Exception");
  }

  private static int indexOf(List<String> lines, String part) {
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).contains(part)) {
        return i;
      }
    }
    return -1;
  }

  private static String key(String login) throws IOException {
    Path file = dir.resolve(login + ".key");
    KeyFile.generate(login).write(file);
    return file.toString();
  }
}
