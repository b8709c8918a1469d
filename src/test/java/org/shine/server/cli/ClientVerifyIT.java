package org.shine.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.shine.server.adapter.Inbox;
import org.shine.server.client.BodyReader;
import org.shine.server.client.MessageBody;
import org.shine.server.client.ShineClient;
import org.shine.server.client.Verdict;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.KeyFile;
import org.shine.server.support.Eventually;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/**
 * The CLI verifies what its server hands it (PROTOCOL §13 "Clients verify"): a container whose signature does not
 * match its author's card key is shown as not verified, never as the author's words. The forgeries come from a real
 * server whose stored blob was changed in its database, and from a stub acting as the user's access server.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class ClientVerifyIT {
  private static final String RED = "\u001b[31m";
  private TestWorld world;
  @TempDir
  Path dir;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx);
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("history: a stored blob changed in the server's database shows as not verified (red on a terminal,"
      + " verified false in JSON) and never as its text; the genuine message beside it shows as before")
  void tamperedHistory(Vertx vertx) throws IOException {
    TestServer s1 = world.server("s1");
    TestUser alice = world.user("alice", s1);
    TestUser bob = world.user("bob", s1);
    ShineClient session = world.session(alice, s1);
    String genuine = session.sendPair(alice.pairTo(bob, "genuine words")).await().get("baseKey").asText();
    String tampered = session.sendPair(alice.pairTo(bob, "pay carol 10")).await().get("baseKey").asText();

    // WHEN the server's copy of bob's message is changed (10 becomes 99), and alice's own copy of it too
    for (String owner : List.of("bob", "alice")) {
      assertThat(world.sql(s1).rows("UPDATE dm_message SET blob = overlay(blob placing convert_to('carol 99', 'UTF8')"
          + " from position(convert_to('carol 10', 'UTF8') in blob)) WHERE owner = $1 AND base_key = $2", owner,
          tampered).rowCount()).isEqualTo(1);
    }

    // THEN bob's history shows it as not verified, never as alice's words
    String bobKey = write(bob);
    Cli.Result history = Cli.run("client", "history", "--key", bobKey, "--server", s1.url(), "--peer", "alice");
    assertThat(history.exitCode()).as(history.err()).isZero();
    assertThat(history.out()).contains("alice → bob  genuine words  (" + genuine + ")")
        .contains("alice → bob  [! not verified: signature does not match alice's key]  (" + tampered + ")")
        .doesNotContain("pay carol");

    Cli.Result json = Cli.run("client", "history", "--key", bobKey, "--server", s1.url(), "--peer", "alice",
        "--json");
    Map<String, JsonNode> byKey = new ConcurrentHashMap<>();
    for (String line : json.out().lines().toList()) {
      JsonNode entry = Json.MAPPER.readTree(line);
      byKey.put(entry.get("baseKey").asText(), entry);
    }
    assertThat(byKey.get(genuine).get("verified").asBoolean()).isTrue();
    assertThat(byKey.get(genuine).get("text").asText()).isEqualTo("genuine words");
    assertThat(byKey.get(tampered).get("verified").asBoolean()).isFalse();
    assertThat(byKey.get(tampered).get("verifyFailure").asText()).isEqualTo("signature does not match alice's key");
    assertThat(byKey.get(tampered).has("text")).as("no text for a container that does not verify").isFalse();

    // alice's own copy: not verified either, and no tick claims it was delivered
    Cli.Result own = Cli.run("client", "history", "--key", write(alice), "--server", s1.url(), "--peer", "bob");
    assertThat(own.out()).contains("alice → bob  [✓ delivered]  genuine words")
        .contains("alice → bob  [! not verified: signature does not match alice's key]  (" + tampered + ")")
        .doesNotContain("pay carol");

    // on a terminal the mark is red, and the changed words are not there either
    String onTerminal = MessageView.historyLine(byKey.get(tampered), Verdict.notVerified(
        byKey.get(tampered).get("verifyFailure").asText()), BodyReader.plain("alice"), true);
    assertThat(onTerminal).contains(RED + "[! not verified: signature does not match alice's key]" + Tick.RESET)
        .doesNotContain("carol 99");
  }

  @Test
  @DisplayName("listen: from an access server that forges, a message and a read receipt not signed by their author's"
      + " key show as not verified; a genuine message shows as text")
  void forgedEvents(Vertx vertx) throws Exception {
    KeyFile alice = KeyFile.generate("alice");
    KeyFile bob = KeyFile.generate("bob");
    KeyFile mallory = KeyFile.generate("alice");
    StubPeer server = forgingServer(vertx, Map.of("alice", alice, "bob", bob));

    try (Cli.Running listen = Cli.start("client", "listen", "--key", write("bob", bob), "--server", server.url())) {
      Eventually.until("listening", 10_000, () -> listen.err().contains("listening as bob"));
      DmContainer forged = incoming("alice", "bob", mallory, "send me your password");
      DmContainer genuine = incoming("alice", "bob", alice, "hello from alice");
      server.push(event("IncomingDirectMessage", forged));
      server.push(event("IncomingDirectMessage", genuine));
      DmContainer forgedReceipt = DmCodec.sign(DmKind.READ_RECEIPT, System.currentTimeMillis(), 5, 0, "alice", "bob",
          "bob|alice|1|2", new byte[0], mallory.privateKey());
      ObjectNode receipt = Json.MAPPER.createObjectNode().put("op", "DmReadReceipt");
      receipt.putObject("payload").put("baseKey", "bob|alice|1|2").put("readerLogin", "alice")
          .put("readAtMs", forgedReceipt.createdAtMs())
          .put("receiptBlobB64", Base64.getEncoder().encodeToString(forgedReceipt.bytes()));
      server.push(receipt);

      Eventually.until("three events printed", 10_000, () -> listen.out().lines().count() >= 3);
      List<String> lines = listen.out().lines().toList();
      assertThat(lines.get(0)).contains("alice → bob: [! not verified: signature does not match alice's key]  ("
          + forged.baseKey() + ")");
      assertThat(lines.get(1)).contains("alice → bob: hello from alice  (" + genuine.baseKey() + ")");
      assertThat(lines.get(2)).isEqualTo("[! not verified: signature does not match alice's key] a read receipt for"
          + " bob|alice|1|2");
      assertThat(listen.out()).doesNotContain("password");
    }

    try (Cli.Running json = Cli.start("client", "listen", "--key", write("bob", bob), "--server", server.url(),
        "--json")) {
      Eventually.until("listening", 10_000, () -> json.err().contains("listening as bob"));
      server.push(event("IncomingDirectMessage", incoming("alice", "bob", mallory, "forged again")));
      Eventually.until("a JSON line", 10_000, () -> json.out().lines().count() >= 1);
      JsonNode payload = Json.MAPPER.readTree(json.out().lines().findFirst().orElseThrow()).get("payload");
      assertThat(payload.get("verified").asBoolean()).isFalse();
      assertThat(payload.get("verifyFailure").asText()).isEqualTo("signature does not match alice's key");
      assertThat(payload.has("text")).isFalse();
    }
    assertThat(server.count("GetUserCard")).as("the first listen reads alice's card once and again for the forgery"
        + " that failed with the card it kept (she may have a newer one); the second listen reads it once").isEqualTo(3);
  }

  @Test
  @DisplayName("chat: a forged message in the history shows once as not verified and gets no read receipt; the"
      + " genuine one is shown and receipted")
  void forgedChatHistory(Vertx vertx) throws Exception {
    KeyFile alice = KeyFile.generate("alice");
    KeyFile bob = KeyFile.generate("bob");
    KeyFile mallory = KeyFile.generate("alice");
    StubPeer server = forgingServer(vertx, Map.of("alice", alice, "bob", bob));
    DmContainer forged = incoming("alice", "bob", mallory, "forged in history");
    DmContainer genuine = incoming("alice", "bob", alice, "genuine in history");
    server.respond("GetDirectMessages", (op, payload) -> {
      ObjectNode page = Json.MAPPER.createObjectNode();
      page.putArray("messages").add(entry(genuine)).add(entry(forged));
      return page;
    });
    server.respond("SendReadReceipt", (op, payload) -> Json.MAPPER.createObjectNode().put("deliveryState",
        "delivered"));

    try (Cli.Running chat = Cli.start("client", "chat", "--key", write("bob", bob), "--server", server.url(),
        "--peer", "alice")) {
      Eventually.until("both shown", 10_000, () -> chat.out().contains("genuine in history")
          && chat.out().contains("[! not verified"));
      assertThat(chat.out()).contains("alice: [! not verified: signature does not match alice's key]")
          .doesNotContain("forged in history");
      Eventually.until("the genuine one is receipted", 10_000, () -> server.count("SendReadReceipt") == 1);
      // a new line typed goes after both: by then no second receipt went out
      server.respond("SendMessagePair", (op, payload) -> Json.MAPPER.createObjectNode().put("deliveryState",
          "accepted"));
      chat.type("got it");
      Eventually.until("the typed line is answered", 10_000, () -> chat.out().contains("bob: got it"));
      String ref = DmCodec.parse(Base64.getDecoder().decode(server.requests().stream()
          .filter(r -> r.op().equals("SendReadReceipt")).findFirst().orElseThrow().payload()
          .get("receiptBlobB64").asText())).ref();
      assertThat(ref).isEqualTo(genuine.baseKey());
      assertThat(server.count("SendReadReceipt")).isEqualTo(1);
    }
  }

  @Test
  @DisplayName("adapter rejected lists the events whose container did not verify, with the reason")
  void adapterRejected() throws Exception {
    Path file = dir.resolve("inbox.db");
    Inbox inbox = Inbox.open(file.toString());
    inbox.store("IncomingDirectMessage|forged", "1", "{}", 1);
    inbox.store("IncomingDirectMessage|fine", "2", "{}", 2);
    inbox.markRejected("IncomingDirectMessage|forged", "signature does not match alice's key");

    Cli.Result rejected = Cli.run("adapter", "rejected", "--inbox", file.toString());
    assertThat(rejected.exitCode()).as(rejected.err()).isZero();
    assertThat(rejected.out().lines().toList()).containsExactly(
        "IncomingDirectMessage|forged\tsignature does not match alice's key");
  }

  /**
   * A stub acting as the user's access server: it logs anyone in, serves the given users' genuine cards, and hands
   * out whatever the test makes it push.
   */
  private StubPeer forgingServer(Vertx vertx, Map<String, KeyFile> users) {
    StubPeer server = world.stub();
    server.respond("AuthChallenge", (op, payload) -> Json.MAPPER.createObjectNode()
        .put("challengeB64", Base64.getEncoder().encodeToString(new byte[32])).put("serverLogin",
            server.serverLogin()));
    server.respond("AuthLogin", (op, payload) -> Json.MAPPER.createObjectNode().put("login",
        payload.get("login").asText()));
    server.respond("GetUserCard", (op, payload) -> {
      KeyFile key = users.get(payload.get("login").asText());
      if (key == null) {
        return new StubPeer.Error(404, "USER_NOT_FOUND", "unknown user");
      }
      ObjectNode answer = Json.MAPPER.createObjectNode();
      answer.set("card", ShineClient.signedCard(payload.get("login").asText(), key,
          List.of(Map.entry(server.serverLogin(), server.url())), 1));
      return answer;
    });
    return server;
  }

  private static DmContainer incoming(String from, String to, KeyFile signer, String text) {
    return DmCodec.sign(DmKind.INCOMING, System.currentTimeMillis(), ShineClient.randomNonce(), 0, from, to, "",
        MessageBody.encode(text), signer.privateKey());
  }

  private static ObjectNode event(String op, DmContainer container) {
    ObjectNode event = Json.MAPPER.createObjectNode().put("op", op);
    event.putObject("payload").put("messageKey", container.messageKey()).put("baseKey", container.baseKey())
        .put("blobB64", Base64.getEncoder().encodeToString(container.bytes()));
    return event;
  }

  private static ObjectNode entry(DmContainer container) {
    return Json.MAPPER.createObjectNode().put("messageKey", container.messageKey())
        .put("baseKey", container.baseKey()).put("direction", "incoming")
        .put("blobB64", Base64.getEncoder().encodeToString(container.bytes())).put("revision", 0)
        .put("read", false).put("deleted", false);
  }

  private String write(TestUser user) throws IOException {
    return write(user.login(), user.key());
  }

  private String write(String login, KeyFile key) throws IOException {
    Path file = dir.resolve(login + "-" + System.nanoTime() + ".key");
    new KeyFile(java.util.Optional.of(login), key.publicKey(), key.privateKey()).write(file);
    return file.toString();
  }
}
