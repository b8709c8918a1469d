package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import org.shine.server.client.CardKeys;
import org.shine.server.client.DeviceCard;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.BodyCipher;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.Hpke;
import org.shine.server.dm.KeyFile;
import org.shine.server.util.Json;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Option;

/**
 * {@code client keys ...}: the user's v3 card (PROTOCOL §4 v3) managed from a device — list it, add a device (and
 * hand it the encryption keys), receive them on the new device, retire, rotate or revoke a device key, set a
 * recovery key, recover with it. Each step publishes the next card on {@code --server}, which relays it to the
 * user's other access server.
 */
@Command(name = "keys", mixinStandardHelpOptions = true,
    description = {"The user's device keys, encryption key and recovery key (v3 card).",
        "A new device: keygen there, 'keys transfer-key' there, 'keys add' here, 'keys receive' there."},
    subcommands = {
        ClientKeys.ListKeys.class,
        ClientKeys.TransferKey.class,
        ClientKeys.Add.class,
        ClientKeys.Receive.class,
        ClientKeys.Remove.class,
        ClientKeys.Rotate.class,
        ClientKeys.Revoke.class,
        ClientKeys.Recovery.class,
        ClientKeys.Recover.class,
        ClientKeys.Trust.class,
        HelpCommand.class,
    })
final class ClientKeys {
  /** The setting a key transfer waits in, by the kid of the new device's transfer key (PROTOCOL §4 v3). */
  static final String TRANSFER_PREFIX = "keys.transfer.";

  private ClientKeys() {
  }

  static String b64(byte[] bytes) {
    return Base64.getEncoder().encodeToString(bytes);
  }

  /** The user's card as served, or {@link CliFailure#NOT_FOUND}. */
  static JsonNode ownCard(ShineClient client, String login) {
    JsonNode card = ClientSupport.servedCard(client, login);
    if (card == null) {
      throw new CliFailure(CliFailure.NOT_FOUND, login + " has no card on " + client.url()
          + " (client register first)");
    }
    return card;
  }

  static JsonNode publish(ShineClient client, ObjectNode card) {
    return ClientSupport.await(client.publishCard(card, null));
  }

  /** A device key given on the command line: canonical base64 of 32 bytes. */
  static String deviceKey(String keyB64) {
    try {
      byte[] raw = Base64.getDecoder().decode(keyB64);
      if (raw.length == Ed25519Signer.PUBLIC_KEY_SIZE && b64(raw).equals(keyB64)) {
        return keyB64;
      }
    } catch (IllegalArgumentException e) {
      // said below
    }
    throw CliFailure.usage("--device-key takes a device's public key as keygen prints it (base64 of 32 bytes): "
        + keyB64);
  }

  static List<String> deviceKeys(JsonNode card) {
    List<String> keys = new ArrayList<>();
    if (card.has("publicKeyB64")) {
      keys.add(card.get("publicKeyB64").asText());
    }
    card.path("keys").forEach(key -> keys.add(key.path("publicKeyB64").asText()));
    return keys;
  }

  static void writeKeyFile(KeyFile key, Path file) {
    try {
      key.replace(file);
    } catch (IOException e) {
      throw new CliFailure(CliFailure.BAD_KEY_FILE, "cannot write key file " + file + ": " + CliErrors.describe(e));
    }
  }

  /** {@code keys list}: the served card, readable. */
  @Command(name = "list", mixinStandardHelpOptions = true,
      description = "Show the user's card: epoch, version, device keys (this one marked), recovery and encryption"
          + " keys, retired and revoked keys.")
  static final class ListKeys extends UserCommand {
    ListKeys(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      JsonNode card = ownCard(session(vertx, user), user.login());
      if (options.json) {
        context.out().println(card);
        return 0;
      }
      String me = user.key().publicKeyB64();
      context.out().println(user.login() + ": card epoch " + card.path("epoch").asLong(0) + ", version "
          + card.path("version").asLong() + (card.has("publicKeyB64") ? " (a v1 card: register again to move to v3)"
          : ""));
      context.out().println("device keys:");
      if (card.has("publicKeyB64")) {
        String key = card.get("publicKeyB64").asText();
        context.out().println("  " + (key.equals(me) ? "* " : "  ") + key + (key.equals(me) ? "  (this device)" : ""));
      }
      card.path("keys").forEach(entry -> {
        String key = entry.path("publicKeyB64").asText();
        context.out().println("  " + (key.equals(me) ? "* " : "  ") + key + "  " + entry.path("label").asText("-")
            + (key.equals(me) ? "  (this device)" : ""));
      });
      context.out().println("recovery key: " + (card.hasNonNull("recoveryKeyB64") ? "set" : "not set"));
      if (card.hasNonNull("encryptionKeyB64")) {
        String kid = BodyCipher.kid(Base64.getDecoder().decode(card.get("encryptionKeyB64").asText()));
        boolean held = user.key().encryptionKeys().stream().anyMatch(pair -> b64(pair.publicKey())
            .equals(card.get("encryptionKeyB64").asText()));
        context.out().println("encryption key: " + kid + (held ? " (this device holds it)"
            : " (this device does not hold it: keys transfer-key here, keys add on a device that holds it, then"
                + " keys receive here)"));
      } else {
        context.out().println("encryption key: none (messages to " + user.login() + " are not end-to-end"
            + " encrypted)");
      }
      card.path("retiredKeys").forEach(entry -> context.out().println("retired: "
          + entry.path("publicKeyB64").asText() + " at " + Instant.ofEpochMilli(entry.path("retiredAtMs").asLong())));
      card.path("revokedKeysB64").forEach(key -> context.out().println("revoked: " + key.asText()));
      return 0;
    }
  }

  /** {@code keys transfer-key}: the key a new device receives the encryption keys with. */
  @Command(name = "transfer-key", mixinStandardHelpOptions = true,
      description = {"Print this device's key and its transfer key (its current X25519 key), for 'keys add"
          + " --transfer-key' on a device that holds the user's encryption keys.",
          "--new first makes a fresh one (a device already in the card, after a revoke)."})
  static final class TransferKey implements java.util.concurrent.Callable<Integer> {
    @Option(names = "--key", required = true, paramLabel = "FILE", description = "this device's key file")
    Path keyFile;

    @Option(names = "--new", description = "make a fresh transfer key first (kept in the key file)")
    boolean fresh;

    private final CliContext context;

    TransferKey(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      KeyFile key = ClientSupport.readKey(keyFile);
      if (fresh || key.encryptionKey().isEmpty()) {
        key = key.withCurrentEncryptionKey(Hpke.generateKeyPair(), List.of());
        writeKeyFile(key, keyFile);
      }
      context.out().println("device key:   " + key.publicKeyB64());
      context.out().println("transfer key: " + b64(key.encryptionKey().orElseThrow().publicKey()));
      context.out().println("on a device of the user: client keys add --device-key " + key.publicKeyB64()
          + " --transfer-key " + b64(key.encryptionKey().orElseThrow().publicKey()) + " ...; then here: client keys"
          + " receive");
      return 0;
    }
  }

  /** {@code keys add}: a new device key in the card, and the encryption keys sealed to its transfer key. */
  @Command(name = "add", mixinStandardHelpOptions = true,
      description = {"Add a device key to the card (signed by this device); with --transfer-key also hand that"
          + " device the user's encryption keys (a setting only it can open; it runs 'keys receive').",
          "A key already in the card is not added again: only the keys are handed over."})
  static final class Add extends UserCommand {
    @Option(names = "--device-key", required = true, paramLabel = "B64", description = "the new device's key")
    String newKey;

    @Option(names = "--label", paramLabel = "LABEL", description = "its name in the card (at most 32 characters)")
    String label;

    @Option(names = "--transfer-key", paramLabel = "X25519_B64",
        description = "the new device's transfer key (keys transfer-key there)")
    String transferKey;

    Add(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      String key = deviceKey(newKey);
      if (label != null && (label.isBlank() || label.length() > DeviceLabels.MAX)) {
        throw CliFailure.usage("--label takes 1-" + DeviceLabels.MAX + " characters");
      }
      byte[] transfer = transferKey == null ? null : transferKey(transferKey);
      ShineClient client = session(vertx, user);
      JsonNode served = ownCard(client, user.login());
      if (deviceKeys(served).contains(key)) {
        context.out().println(key + " is a device key of " + user.login() + " already");
      } else {
        DeviceCard card = DeviceCard.next(served).addKey(key, label);
        publish(client, card.sign(user.key()));
        context.out().println("added device key " + key + (label == null ? "" : " (" + label + ")") + ": card"
            + " version " + card.version());
      }
      if (transfer != null) {
        String setting = handOver(client, user, served, key, transfer);
        context.out().println("the encryption keys wait for that device in the setting " + setting
            + " (sealed to its transfer key): run client keys receive there");
      }
      return 0;
    }

    private static byte[] transferKey(String keyB64) {
      try {
        byte[] raw = Base64.getDecoder().decode(keyB64);
        if (raw.length == 32) {
          return raw;
        }
      } catch (IllegalArgumentException e) {
        // said below
      }
      throw CliFailure.usage("--transfer-key takes the X25519 key 'keys transfer-key' prints (base64 of 32 bytes)");
    }

    /** Seals the user's encryption private keys (the card's current one first) and stores them as a setting. */
    private String handOver(ShineClient client, ClientSupport.Identity user, JsonNode served, String key,
        byte[] transfer) {
      List<Hpke.KeyPair> held = new ArrayList<>(user.key().encryptionKeys());
      String current = served.path("encryptionKeyB64").asText(null);
      if (current == null) {
        throw new CliFailure(CliFailure.FAILED, user.login() + "'s card has no encryption key to hand over"
            + " (client keys transfer-key --new adds one to this key file; client register then names it in the"
            + " card)");
      }
      if (held.stream().noneMatch(pair -> b64(pair.publicKey()).equals(current))) {
        throw new CliFailure(CliFailure.FAILED, "this device does not hold " + user.login() + "'s current"
            + " encryption key, so it cannot hand it over (keys list says which device does)");
      }
      held.sort((a, b) -> Boolean.compare(!b64(a.publicKey()).equals(current), !b64(b.publicKey()).equals(current)));
      // the key file's own shape (as the web chat hands keys over too): newest first, the card's current one first
      ObjectNode secret = Json.MAPPER.createObjectNode();
      held.forEach(pair -> secret.withArray("encryptionKeys").addObject().put("publicKeyB64", b64(pair.publicKey()))
          .put("privateKeyB64", b64(pair.privateKey())));
      byte[] sealed = BodyCipher.sealKeyTransfer(secret.toString().getBytes(StandardCharsets.UTF_8), transfer,
          user.login(), key);
      String setting = TRANSFER_PREFIX + BodyCipher.kid(transfer);
      try {
        JsonNode value = Json.MAPPER.readTree(sealed);
        ClientSupport.await(client.request("SetUserSetting", ShineClient.object().put("key", setting)
            .set("value", value)));
      } catch (IOException e) {
        throw new IllegalStateException("a sealed transfer is JSON", e);
      }
      return setting;
    }
  }

  /** {@code keys receive}: the encryption keys another device handed over, into this key file. */
  @Command(name = "receive", mixinStandardHelpOptions = true,
      description = "On a new device: take the encryption keys another device handed over (keys add"
          + " --transfer-key) into the key file, and clear the setting they waited in.")
  static final class Receive extends UserCommand {
    Receive(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      Hpke.KeyPair transfer = user.key().encryptionKey().orElseThrow(() -> new CliFailure(CliFailure.BAD_KEY_FILE,
          options.keyFile + " holds no transfer key (client keys transfer-key --key " + options.keyFile + ")"));
      String setting = TRANSFER_PREFIX + BodyCipher.kid(transfer.publicKey());
      ShineClient client = session(vertx, user);
      JsonNode value = ClientSupport.await(client.allSettings()).path(setting);
      if (!value.isObject()) {
        throw new CliFailure(CliFailure.NOT_FOUND, "no encryption keys wait for this device (setting " + setting
            + "): on a device of " + user.login() + " run client keys add --device-key " + user.key().publicKeyB64()
            + " --transfer-key " + b64(transfer.publicKey()));
      }
      List<Hpke.KeyPair> received = new ArrayList<>();
      try {
        byte[] opened = BodyCipher.openKeyTransfer(value.toString().getBytes(StandardCharsets.UTF_8),
            BodyCipher.PrivateKeys.of(user.key().encryptionKeys().stream().map(Hpke.KeyPair::privateKey).toList()),
            user.login(), user.key().publicKeyB64());
        for (JsonNode key : Json.MAPPER.readTree(opened).path("encryptionKeys")) {
          // the public key is derived, never taken from what arrived
          byte[] raw = Base64.getDecoder().decode(key.path("privateKeyB64").asText());
          received.add(new Hpke.KeyPair(raw, Hpke.publicKeyOf(raw)));
        }
      } catch (BodyCipher.OpenFailure | IOException | IllegalArgumentException e) {
        throw new CliFailure(CliFailure.FAILED, "the keys in " + setting + " do not open with this device's"
            + " transfer key (" + e.getMessage() + ")");
      }
      if (received.isEmpty()) {
        throw new CliFailure(CliFailure.FAILED, "the transfer in " + setting + " holds no key");
      }
      writeKeyFile(user.key().withCurrentEncryptionKey(received.get(0), received), options.keyFile);
      ClientSupport.await(client.request("SetUserSetting", ShineClient.object().put("key", setting)
          .putNull("value")));
      context.out().println("received " + received.size() + " encryption key" + (received.size() == 1 ? "" : "s")
          + " into " + options.keyFile + " (current: " + BodyCipher.kid(received.get(0).publicKey()) + "); the"
          + " setting " + setting + " is cleared (null)");
      return 0;
    }
  }

  /** {@code keys remove}: retires another device's key (rotation without replacement). */
  @Command(name = "remove", mixinStandardHelpOptions = true,
      description = "Retire a device key (a device given up, not stolen): its messages so far still verify.")
  static final class Remove extends UserCommand {
    @Option(names = "--device-key", required = true, paramLabel = "B64", description = "the key to retire")
    String key;

    Remove(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      String retired = deviceKey(key);
      if (retired.equals(user.key().publicKeyB64())) {
        throw CliFailure.usage("that is this device's key: keys rotate gives this device a new one");
      }
      ShineClient client = session(vertx, user);
      JsonNode served = ownCard(client, user.login());
      if (!deviceKeys(served).contains(retired)) {
        throw new CliFailure(CliFailure.NOT_FOUND, retired + " is not a device key of " + user.login());
      }
      DeviceCard card = DeviceCard.next(served).retire(retired, System.currentTimeMillis());
      publish(client, card.sign(user.key()));
      context.out().println("retired device key " + retired + ": card version " + card.version());
      return 0;
    }
  }

  /** {@code keys rotate}: this device gets a new Ed25519 key; the old one is retired. */
  @Command(name = "rotate", mixinStandardHelpOptions = true,
      description = "Give this device a new device key: the card (signed by the old key) retires the old one, and"
          + " the key file is replaced.")
  static final class Rotate extends UserCommand {
    Rotate(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      ShineClient client = session(vertx, user);
      JsonNode served = ownCard(client, user.login());
      Ed25519Signer.KeyPair fresh = Ed25519Signer.generate();
      KeyFile next = new KeyFile(user.key().login(), fresh.publicKey(), fresh.privateKey(),
          user.key().encryptionKeys());
      String label = null;
      for (JsonNode entry : served.path("keys")) {
        if (entry.path("publicKeyB64").asText().equals(user.key().publicKeyB64())) {
          label = entry.path("label").asText(null);
        }
      }
      DeviceCard card = DeviceCard.next(served).addKey(next.publicKeyB64(), label)
          .retire(user.key().publicKeyB64(), System.currentTimeMillis());
      publish(client, card.sign(user.key()));
      writeKeyFile(next, options.keyFile);
      ClientSupport.Identity rotated = new ClientSupport.Identity(user.login(), next);
      ClientSupport.loggedIn(vertx, options.server, rotated);
      context.out().println("rotated this device's key: " + next.publicKeyB64() + " (the old "
          + user.key().publicKeyB64() + " is retired); card version " + card.version() + "; " + options.keyFile
          + " holds the new key, which logged in");
      return 0;
    }
  }

  /** {@code keys revoke}: a compromised device key, with a new encryption key in the same card. */
  @Command(name = "revoke", mixinStandardHelpOptions = true,
      description = {"Revoke a device key (a stolen or lost device): it can no longer log in or sign, and the card"
          + " gets a new encryption key, kept in this key file (old ones stay, to read old messages).",
          "Other devices of the user then need the new key: 'keys transfer-key --new' there, 'keys add' here,"
              + " 'keys receive' there."})
  static final class Revoke extends UserCommand {
    @Option(names = "--device-key", required = true, paramLabel = "B64", description = "the key to revoke")
    String key;

    Revoke(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      String revoked = deviceKey(key);
      if (revoked.equals(user.key().publicKeyB64())) {
        throw CliFailure.usage("that is this device's key: revoke it from another device, or recover with the"
            + " recovery key");
      }
      ShineClient client = session(vertx, user);
      JsonNode served = ownCard(client, user.login());
      boolean retired = false;
      for (JsonNode entry : served.path("retiredKeys")) {
        retired |= entry.path("publicKeyB64").asText().equals(revoked);
      }
      if (!deviceKeys(served).contains(revoked) && !retired) {
        throw new CliFailure(CliFailure.NOT_FOUND, revoked + " is not a device key of " + user.login());
      }
      Hpke.KeyPair encryption = Hpke.generateKeyPair();
      // the private key is on disk before any card names it
      writeKeyFile(user.key().withCurrentEncryptionKey(encryption, List.of()), options.keyFile);
      DeviceCard card = DeviceCard.next(served).revoke(revoked).encryptionKey(b64(encryption.publicKey()));
      publish(client, card.sign(user.key()));
      List<String> others = new ArrayList<>(card.deviceKeys());
      others.remove(user.key().publicKeyB64());
      context.out().println("revoked device key " + revoked + " and rotated the encryption key (now "
          + BodyCipher.kid(encryption.publicKey()) + "): card version " + card.version());
      if (!others.isEmpty()) {
        context.out().println("the other devices (" + String.join(", ", others) + ") need the new encryption key:"
            + " on each, client keys transfer-key --new; here, client keys add --device-key THAT_KEY --transfer-key"
            + " KEY; there, client keys receive");
      }
      return 0;
    }
  }

  /** {@code keys recovery}: a recovery key file, named in the card. */
  @Command(name = "recovery", mixinStandardHelpOptions = true,
      description = "Make a recovery key (a plain key file) and name it in the card; keep the file offline.")
  static final class Recovery extends UserCommand {
    @Option(names = "--out", required = true, paramLabel = "FILE", description = "the recovery key file to create")
    Path out;

    Recovery(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      ShineClient client = session(vertx, user);
      JsonNode served = ownCard(client, user.login());
      if (served.hasNonNull("recoveryKeyB64")) {
        throw new CliFailure(CliFailure.FAILED, user.login() + "'s card has a recovery key already; only that key"
            + " can change it (a recovery: keys recover)");
      }
      Ed25519Signer.KeyPair pair = Ed25519Signer.generate();
      KeyFile recovery = new KeyFile(Optional.of(user.login()), pair.publicKey(), pair.privateKey());
      try {
        recovery.write(out);
      } catch (FileAlreadyExistsException e) {
        throw new CliFailure(CliFailure.FAILED, out + " exists; refusing to overwrite a key");
      } catch (IOException e) {
        throw new CliFailure(CliFailure.FAILED, "cannot write " + out + ": " + CliErrors.describe(e));
      }
      DeviceCard card = DeviceCard.next(served).recoveryKey(recovery.publicKeyB64());
      publish(client, card.sign(user.key()));
      context.out().println("wrote the recovery key " + out + " and named it in the card (version " + card.version()
          + ")");
      context.out().println("WARNING: keep " + out + " offline (a USB stick in a drawer, a printout), never on this"
          + " device: whoever holds it can take over " + user.login() + " and revoke every device.");
      return 0;
    }
  }

  /** {@code keys recover}: a new epoch signed by the recovery key, with this key file's device as the only one. */
  @Command(name = "recover", mixinStandardHelpOptions = true,
      description = {"Recover the user with the recovery key: the next epoch revokes every device key and makes"
          + " --key (a new keygen file) the only device, with its encryption key.",
          "Messages encrypted to the old encryption key cannot be read unless a device still holds it."})
  static final class Recover extends UserCommand {
    @Option(names = "--recovery-key", required = true, paramLabel = "FILE", description = "the recovery key file")
    Path recoveryFile;

    @Option(names = "--label", paramLabel = "LABEL", description = "the new device's name in the card")
    String label;

    Recover(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      KeyFile recovery = ClientSupport.readKey(recoveryFile);
      Hpke.KeyPair encryption = user.key().encryptionKey().orElseThrow(() -> new CliFailure(
          CliFailure.BAD_KEY_FILE, options.keyFile + " holds no encryption key: make the new device with keygen"));
      ShineClient client = ClientSupport.connect(vertx, options.server);
      JsonNode served = ownCard(client, user.login());
      if (!recovery.publicKeyB64().equals(served.path("recoveryKeyB64").asText(null))) {
        throw new CliFailure(CliFailure.LOGIN_REFUSED, recoveryFile + " is not the recovery key of "
            + user.login() + "'s card");
      }
      DeviceCard card = DeviceCard.next(served).recoverTo(user.key().publicKeyB64(),
          label != null ? label : DeviceLabels.ofThisHost()).encryptionKey(b64(encryption.publicKey()));
      publish(client, card.sign(recovery));
      ClientSupport.loggedIn(vertx, options.server, user);
      context.out().println("recovered " + user.login() + ": epoch " + card.epoch() + ", every earlier device key"
          + " revoked, " + user.key().publicKeyB64() + " the only device (it logged in), new encryption key "
          + BodyCipher.kid(encryption.publicKey()));
      return 0;
    }
  }

  /** {@code keys trust}: accept a contact's current card after a blocking warning. */
  @Command(name = "trust", mixinStandardHelpOptions = true,
      description = "Forget the pinned card of a contact whose keys changed in a way their devices did not sign,"
          + " so the card served now is pinned on next sight. Only after checking with them another way.")
  static final class Trust extends UserCommand {
    @Option(names = "--contact", required = true, paramLabel = "LOGIN", description = "the contact")
    String contact;

    Trust(CliContext context) {
      super(context);
    }

    @Override
    int run(Vertx vertx, ClientSupport.Identity user) {
      ShineClient client = session(vertx, user);
      JsonNode served = ClientSupport.servedCard(client, contact);
      if (served == null) {
        throw new CliFailure(CliFailure.NOT_FOUND, "there is no user " + contact + " on " + options.server);
      }
      String problem = ClientSupport.await(vertx.executeBlocking(() -> CardKeys.of(contact, served).problem(),
          false));
      if (problem != null) {
        throw new CliFailure(CliFailure.FAILED, problem);
      }
      contacts().forget(vertx, contact);
      ClientSupport.await(contacts().card(vertx, client, contact));
      context.out().println("pinned " + contact + "'s card as served now (epoch " + served.path("epoch").asLong(0)
          + ", version " + served.path("version").asLong() + ")");
      return 0;
    }
  }
}
