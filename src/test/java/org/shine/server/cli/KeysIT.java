package org.shine.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Row;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.shine.server.client.DeviceCard;
import org.shine.server.client.MessageBody;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.BodyCipher;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.Hpke;
import org.shine.server.dm.KeyFile;
import org.shine.server.support.Eventually;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/**
 * v3 cards from the command line (PROTOCOL §4 v3): register, {@code client keys ...} (add a device and hand it the
 * encryption keys, revoke, rotate, recovery, recover), contacts' cards pinned on first sight, and end-to-end
 * encrypted bodies — against a real server and its database.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class KeysIT {
  private static TestWorld world;
  private static TestServer server;
  private static String url;
  @TempDir
  static Path dir;

  @BeforeAll
  static void start(Vertx vertx) {
    world = TestWorld.on(vertx);
    server = world.server("s1");
    url = server.url();
  }

  @AfterAll
  static void stop() {
    world.close();
  }

  private static Cli.Result ok(String... args) {
    Cli.Result result = Cli.run(args);
    assertThat(result.exitCode()).as(String.join(" ", args) + "\n" + result.out() + result.err()).isZero();
    return result;
  }

  private static String keygen(String file, String login) {
    Path path = dir.resolve(file);
    Cli.Result made = ok("keygen", "--out", path.toString(), "--login", login);
    assertThat(made.out()).contains("device key").contains("also holds an encryption key");
    return path.toString();
  }

  private static String registered(String file, String login) {
    String key = keygen(file, login);
    ok("client", "register", "--key", key, "--server", url, "--label", file);
    return key;
  }

  private static JsonNode card(String login) throws Exception {
    ShineClient client = world.anonymous(server);
    return client.request("GetUserCard", ShineClient.object().put("login", login)).await().path("card");
  }

  private static String line(String out, String prefix) {
    return out.lines().filter(l -> l.startsWith(prefix)).findFirst().orElseThrow().substring(prefix.length())
        .strip();
  }

  @Test
  @DisplayName("register publishes a v3 card with the device's label and the key file's encryption key")
  void registerV3() throws Exception {
    String key = registered("ann-laptop", "ann");
    KeyFile file = KeyFile.read(Path.of(key));

    JsonNode card = card("ann");

    assertThat(card.has("publicKeyB64")).isFalse();
    assertThat(card.path("keys").get(0).path("publicKeyB64").asText()).isEqualTo(file.publicKeyB64());
    assertThat(card.path("keys").get(0).path("label").asText()).isEqualTo("ann-laptop");
    assertThat(card.path("encryptionKeyB64").asText())
        .isEqualTo(Base64.getEncoder().encodeToString(file.encryptionKey().orElseThrow().publicKey()));
    Cli.Result list = ok("client", "keys", "list", "--key", key, "--server", url);
    assertThat(list.out()).contains("ann: card epoch 0, version 1", "* " + file.publicKeyB64() + "  ann-laptop"
        + "  (this device)", "recovery key: not set", "(this device holds it)");

    Cli.Result malformed = Cli.run("client", "keys", "add", "--key", key, "--server", url, "--device-key", "nope");
    assertThat(malformed.exitCode()).isEqualTo(CliFailure.USAGE);
    assertThat(malformed.err()).startsWith("error: --device-key takes a device's public key");
    Cli.Result unknown = Cli.run("client", "keys", "remove", "--key", key, "--server", url, "--device-key",
        KeyFile.generate("ann").publicKeyB64());
    assertThat(unknown.exitCode()).isEqualTo(CliFailure.NOT_FOUND);
    assertThat(unknown.err()).contains("is not a device key of ann");
    Cli.Result own = Cli.run("client", "keys", "revoke", "--key", key, "--server", url, "--device-key",
        file.publicKeyB64());
    assertThat(own.exitCode()).isEqualTo(CliFailure.USAGE);
    assertThat(own.err()).contains("that is this device's key");
  }

  @Test
  @DisplayName("a user with a v1 card registers again and moves to v3, keeping the key")
  void v1ToV3() throws Exception {
    String key = keygen("vic-v1", "vic");
    KeyFile file = KeyFile.read(Path.of(key));
    world.anonymous(server).publishCard("vic", file, List.of(Map.entry("s1", url)), 1).await();

    Cli.Result again = ok("client", "register", "--key", key, "--server", url);

    assertThat(again.out()).contains("card version 2");
    JsonNode card = card("vic");
    assertThat(card.path("keys").get(0).path("publicKeyB64").asText()).isEqualTo(file.publicKeyB64());
    assertThat(card.path("signerKeyB64").asText()).isEqualTo(file.publicKeyB64());
  }

  @Test
  @DisplayName("a second device added with a transfer key reads messages sent before it; a revoked device cannot"
      + " log in, and the card gets a new encryption key")
  void addReceiveRevoke() throws Exception {
    String laptop = registered("amy-laptop", "amy");
    String ben = registered("ben-key", "ben");
    ok("client", "send", "--key", ben, "--server", url, "--to", "amy", "--text", "sent before the phone");

    String phone = keygen("amy-phone", "amy");
    Cli.Result transfer = ok("client", "keys", "transfer-key", "--key", phone);
    String phoneKey = line(transfer.out(), "device key:");
    String transferKey = line(transfer.out(), "transfer key:");
    Cli.Result added = ok("client", "keys", "add", "--key", laptop, "--server", url, "--device-key", phoneKey,
        "--label", "phone", "--transfer-key", transferKey);
    assertThat(added.out()).contains("added device key " + phoneKey, "keys.transfer.");

    Cli.Result received = ok("client", "keys", "receive", "--key", phone, "--server", url);
    assertThat(received.out()).contains("received 1 encryption key");
    Cli.Result history = ok("client", "history", "--key", phone, "--server", url, "--peer", "ben");
    assertThat(history.out()).contains("ben → amy  sent before the phone");
    assertThat(ok("client", "settings", "get", "--key", phone, "--server", url).out())
        .doesNotContain("\"v\":2");
    assertThat(Cli.run("client", "keys", "receive", "--key", phone, "--server", url).exitCode())
        .as("the transfer is cleared once taken").isEqualTo(CliFailure.NOT_FOUND);

    String before = card("amy").path("encryptionKeyB64").asText();
    Cli.Result revoked = ok("client", "keys", "revoke", "--key", laptop, "--server", url, "--device-key",
        phoneKey);
    assertThat(revoked.out()).contains("revoked device key " + phoneKey, "rotated the encryption key");

    JsonNode card = card("amy");
    assertThat(card.path("revokedKeysB64").toString()).contains(phoneKey);
    assertThat(card.path("encryptionKeyB64").asText()).isNotEqualTo(before);
    assertThat(Cli.run("client", "history", "--key", phone, "--server", url, "--peer", "ben").exitCode())
        .isEqualTo(CliFailure.LOGIN_REFUSED);
    ok("client", "send", "--key", ben, "--server", url, "--to", "amy", "--text", "after the revocation");
    assertThat(ok("client", "history", "--key", laptop, "--server", url, "--peer", "ben").out())
        .contains("ben → amy  sent before the phone", "ben → amy  after the revocation");
  }

  @Test
  @DisplayName("rotate gives this device a new key that logs in, the old one is retired and refused; recover with"
      + " the recovery key revokes every device and the new one logs in")
  void rotateRecoveryRecover() throws Exception {
    String laptop = registered("cy-laptop", "cy");
    Path oldCopy = dir.resolve("cy-laptop-old");
    Files.copy(Path.of(laptop), oldCopy, StandardCopyOption.COPY_ATTRIBUTES);
    String oldKey = KeyFile.read(oldCopy).publicKeyB64();

    Cli.Result rotated = ok("client", "keys", "rotate", "--key", laptop, "--server", url);

    String newKey = KeyFile.read(Path.of(laptop)).publicKeyB64();
    assertThat(newKey).isNotEqualTo(oldKey);
    assertThat(rotated.out()).contains("rotated this device's key: " + newKey);
    assertThat(card("cy").path("retiredKeys").toString()).contains(oldKey);
    assertThat(Cli.run("client", "history", "--key", oldCopy.toString(), "--server", url, "--peer", "x")
        .exitCode()).isEqualTo(CliFailure.LOGIN_REFUSED);

    Path recovery = dir.resolve("cy-recovery");
    Cli.Result made = ok("client", "keys", "recovery", "--key", laptop, "--server", url, "--out",
        recovery.toString());
    assertThat(made.out()).contains("WARNING: keep " + recovery + " offline");
    assertThat(card("cy").path("recoveryKeyB64").asText()).isEqualTo(KeyFile.read(recovery).publicKeyB64());

    String fresh = keygen("cy-new", "cy");
    Cli.Result recovered = ok("client", "keys", "recover", "--key", fresh, "--server", url, "--recovery-key",
        recovery.toString());

    assertThat(recovered.out()).contains("recovered cy: epoch 1");
    assertThat(card("cy").path("epoch").asLong()).isEqualTo(1);
    assertThat(Cli.run("client", "keys", "list", "--key", laptop, "--server", url).exitCode())
        .isEqualTo(CliFailure.LOGIN_REFUSED);
    assertThat(ok("client", "keys", "list", "--key", fresh, "--server", url).out()).contains("card epoch 1",
        "(this device)", "revoked: " + newKey);
  }

  @Test
  @DisplayName("a contact's card that does not follow from the pinned one is a blocking warning: send refuses")
  void pinning() throws Exception {
    String dora = registered("dora-key", "dora");
    String eve = registered("eve-key", "eve");
    ok("client", "send", "--key", dora, "--server", url, "--to", "eve", "--text", "first sight pins eve");
    Path pins = Path.of(dora + ".contacts.json");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(pins))).isEqualTo("rw-------");

    // GIVEN what dora pinned on first sight was another key's card (a server that lied then, or one that lies now)
    KeyFile other = KeyFile.generate("eve");
    ObjectNode forged = DeviceCard.first("eve", other.publicKeyB64(), "x", List.of(Map.entry("s1", url)))
        .sign(other);
    ObjectNode root = (ObjectNode) Json.MAPPER.readTree(Files.readString(pins));
    ((ObjectNode) root.path("contacts").path("eve")).set("card", forged);
    Files.writeString(pins, root.toString());
    // WHEN eve's card moves on (signed by her real key, which the pinned card does not list)
    ok("client", "register", "--key", eve, "--server", url);

    Cli.Result refused = Cli.run("client", "send", "--key", dora, "--server", url, "--to", "eve", "--text", "hi");

    assertThat(refused.exitCode()).isEqualTo(CliFailure.KEYS_CHANGED);
    assertThat(refused.err()).contains("eve's keys changed in a way his devices did not sign");
    try (Cli.Running chat = Cli.start("client", "chat", "--key", dora, "--server", url, "--peer", "eve")) {
      Eventually.until("the warning", 10_000,
          () -> chat.out().contains("eve's keys changed in a way his devices did not sign"));
      chat.type("are you eve?");
      Eventually.until("not sent", 10_000, () -> chat.out().contains("-- not sent: "
          + "\"are you eve?\""));
    }
    ok("client", "keys", "trust", "--key", dora, "--server", url, "--contact", "eve");
    ok("client", "send", "--key", dora, "--server", url, "--to", "eve", "--text", "checked by phone");
  }

  @Test
  @DisplayName("an encrypted message leaves no plaintext on the server; a peer without an encryption key is 'not"
      + " end-to-end encrypted'; a foreign body 'cannot decrypt on this device'; plaintext 'sent unencrypted'")
  void encryption() throws Exception {
    String fay = registered("fay-key", "fay");
    String gus = registered("gus-key", "gus");
    Path plainKey = dir.resolve("hal-key");
    KeyFile generated = KeyFile.generate("hal");
    new KeyFile(generated.login(), generated.publicKey(), generated.privateKey()).write(plainKey);
    ok("client", "register", "--key", plainKey.toString(), "--server", url);

    Cli.Result sent = ok("client", "send", "--key", fay, "--server", url, "--to", "gus", "--text",
        "zebra-secret-42");
    assertThat(sent.out()).doesNotContain("not end-to-end encrypted");
    for (Row row : world.sql(server).rows("SELECT blob, pair_blob FROM dm_message WHERE peer IN ('fay', 'gus')")) {
      for (int column = 0; column < 2; column++) {
        if (row.getBuffer(column) != null) {
          assertThat(row.getBuffer(column).toString(StandardCharsets.ISO_8859_1)).doesNotContain("zebra-secret");
        }
      }
    }
    assertThat(ok("client", "history", "--key", gus, "--server", url, "--peer", "fay").out())
        .contains("fay → gus  zebra-secret-42");
    assertThat(ok("client", "history", "--key", fay, "--server", url, "--peer", "gus").out())
        .contains("zebra-secret-42");

    Cli.Result toHal = ok("client", "send", "--key", fay, "--server", url, "--to", "hal", "--text", "plain");
    assertThat(toHal.out()).contains("not end-to-end encrypted");

    // a body sealed to a key gus does not hold, and a plaintext one from fay, whose card has an encryption key
    KeyFile fayKey = KeyFile.read(Path.of(fay));
    ShineClient session = world.anonymous(server);
    session.login("fay", fayKey).await();
    long now = System.currentTimeMillis();
    long nonce = ShineClient.randomNonce();
    String baseKey = org.shine.server.dm.DmKeys.baseKey("fay", "gus", now, nonce);
    byte[] foreign = BodyCipher.sealBody(MessageBody.encode("not for gus"), Hpke.generateKeyPair().publicKey(),
        baseKey, DmKind.INCOMING, 0);
    session.sendPair(ShineClient.signPair("fay", fayKey, "gus", now, nonce, 0, foreign, foreign)).await();
    session.sendText("fay", fayKey, "gus", "old client text").await();

    String history = ok("client", "history", "--key", gus, "--server", url, "--peer", "fay").out();
    assertThat(history).contains("fay → gus  [cannot decrypt on this device]", "old client text [sent unencrypted]")
        .doesNotContain("not for gus");
  }

  @Test
  @DisplayName("chat decrypts the history and seals what is typed; with a peer without an encryption key it says"
      + " 'not end-to-end encrypted' at the top")
  void chat() throws Exception {
    String ida = registered("ida-key", "ida");
    String jon = registered("jon-key", "jon");
    Path plainKey = dir.resolve("kim-key");
    KeyFile generated = KeyFile.generate("kim");
    new KeyFile(generated.login(), generated.publicKey(), generated.privateKey()).write(plainKey);
    ok("client", "register", "--key", plainKey.toString(), "--server", url);
    ok("client", "send", "--key", jon, "--server", url, "--to", "ida", "--text", "sealed hello");

    try (Cli.Running chat = Cli.start("client", "chat", "--key", ida, "--server", url, "--peer", "jon")) {
      Eventually.until("the history", 10_000, () -> chat.out().contains("jon: sealed hello"));
      chat.type("sealed answer");
      Eventually.until("sent", 10_000, () -> chat.out().contains("ida: sealed answer  [✓ delivered]"));
      assertThat(chat.out()).doesNotContain("not end-to-end encrypted");
    }
    assertThat(world.sql(server).count("SELECT count(*) FROM dm_message WHERE peer IN ('ida', 'jon')"
        + " AND position('sealed answer'::bytea IN blob) > 0")).isZero();
    assertThat(ok("client", "history", "--key", jon, "--server", url, "--peer", "ida").out())
        .contains("ida → jon  sealed answer");

    try (Cli.Running chat = Cli.start("client", "chat", "--key", ida, "--server", url, "--peer", "kim")) {
      Eventually.until("the mark", 10_000, () -> chat.out().contains("-- not end-to-end encrypted: kim's card has"
          + " no encryption key"));
    }
  }
}
