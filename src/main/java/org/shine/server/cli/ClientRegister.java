package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.shine.server.client.DeviceCard;
import org.shine.server.client.ShineClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code client register}: publishes the user's signed v3 card (PROTOCOL §4 v3) on each of its one or two access
 * servers: a first card with this device's key and the key file's encryption key, or the next version of the served
 * card (a v1 card moves to v3, signed by its key).
 */
@Command(name = "register", mixinStandardHelpOptions = true,
    description = "Publish the user's signed card naming 1-2 access servers (each URL is asked for its name).")
final class ClientRegister implements Callable<Integer> {
  @Option(names = "--key", required = true, paramLabel = "FILE", description = "the user's key file (keygen)")
  Path keyFile;

  @Option(names = "--login", paramLabel = "LOGIN", description = "the user (default: the login in the key file)")
  String login;

  @Option(names = "--server", required = true, paramLabel = "URL",
      description = "an access server of the user; give it twice for a user with two")
  List<String> servers;

  @Option(names = "--card-version", paramLabel = "N",
      description = "the card's version (default: the stored one + 1)")
  Long version;

  @Option(names = "--invite", paramLabel = "CODE", description = {"an invite code of a server that wants one for a"
      + " new user (directory.registration \"invite\"; its operator makes it with admin invite); give one per"
      + " --server, in the same order"})
  List<String> invites = new ArrayList<>();

  @Option(names = "--label", paramLabel = "LABEL",
      description = "this device's name in the card (at most 32 characters; default: the host name, else cli)")
  String label;

  @Option(names = "--json", description = "the servers' answers as JSON lines")
  boolean json;

  private final CliContext context;

  ClientRegister(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    if (servers.size() > 2) {
      throw CliFailure.usage("register takes one or two --server URLs");
    }
    if (invites.size() > servers.size()) {
      throw CliFailure.usage("register takes at most one --invite per --server");
    }
    if (label != null && (label.isBlank() || label.length() > DeviceLabels.MAX)) {
      throw CliFailure.usage("--label takes 1-" + DeviceLabels.MAX + " characters");
    }
    ClientSupport.Identity user = ClientSupport.identity(keyFile, login);
    Vertx vertx = Vertx.vertx();
    try {
      List<Map.Entry<String, String>> routes = new ArrayList<>();
      List<ShineClient> clients = new ArrayList<>();
      for (String url : servers) {
        ShineClient client = ClientSupport.connect(vertx, url);
        clients.add(client);
        routes.add(Map.entry(ClientSupport.await(client.serverLogin(user.login())), url));
      }
      DeviceCard card = nextCard(user, ClientSupport.servedCard(clients.get(0), user.login()), routes);
      ObjectNode signed = card.sign(user.key());
      for (int i = 0; i < clients.size(); i++) {
        JsonNode answer = ClientSupport.await(clients.get(i).publishCard(signed,
            i < invites.size() ? invites.get(i) : null));
        context.out().println(json ? answer.toString() : "registered " + user.login() + " on "
            + routes.get(i).getKey() + " (" + routes.get(i).getValue() + "), card version " + card.version());
      }
      return 0;
    } finally {
      ClientSupport.close(vertx);
    }
  }

  /**
   * A first v3 card naming this device and the key file's encryption key, or the card that follows the served one
   * (v1 or v3, which must list this device's key) with these routes: a v1 card becomes a v3 card signed by its key.
   */
  private DeviceCard nextCard(ClientSupport.Identity user, JsonNode served, List<Map.Entry<String, String>> routes) {
    String deviceKey = user.key().publicKeyB64();
    DeviceCard card;
    if (served == null) {
      card = DeviceCard.first(user.login(), deviceKey, label != null ? label : DeviceLabels.ofThisHost(), routes);
    } else {
      card = DeviceCard.next(served).routes(routes);
      if (!card.deviceKeys().contains(deviceKey)) {
        throw new CliFailure(CliFailure.FAILED, user.login() + " is registered with other device keys, and "
            + keyFile + " is not one of them: add it from a device of " + user.login() + " (client keys add"
            + " --device-key " + deviceKey + ")");
      }
      if (label != null || served.has("publicKeyB64")) {
        card.label(deviceKey, label != null ? label : DeviceLabels.ofThisHost());
      }
    }
    if (card.encryptionKeyB64() == null) {
      user.key().encryptionKey().ifPresent(key -> card.encryptionKey(Base64.getEncoder().encodeToString(
          key.publicKey())));
    }
    if (version != null) {
      card.version(version);
    }
    return card;
  }
}
