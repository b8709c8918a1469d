package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code client register}: publishes the user's signed card on each of its one or two access servers. */
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
      long cardVersion = version != null ? version : nextVersion(clients.get(0), user.login());
      for (int i = 0; i < clients.size(); i++) {
        JsonNode answer = ClientSupport.await(clients.get(i).publishCard(user.login(), user.key(), routes,
            cardVersion, i < invites.size() ? invites.get(i) : null));
        context.out().println(json ? answer.toString() : "registered " + user.login() + " on "
            + routes.get(i).getKey() + " (" + routes.get(i).getValue() + "), card version " + cardVersion);
      }
      return 0;
    } finally {
      ClientSupport.close(vertx);
    }
  }

  private static long nextVersion(ShineClient client, String login) {
    try {
      return ClientSupport.await(client.request("GetUserCard", ShineClient.object().put("login", login)))
          .path("card").path("version").asLong() + 1;
    } catch (ShineClientException e) {
      if (e.status() == 404) {
        return 1;
      }
      throw e;
    }
  }
}
