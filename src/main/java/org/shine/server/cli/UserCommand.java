package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.concurrent.Callable;
import java.util.function.Function;
import org.shine.server.client.Resender;
import org.shine.server.client.ShineClient;
import picocli.CommandLine.Mixin;

/** A {@code client} subcommand that runs logged in as the user, on its own Vert.x instance. */
abstract class UserCommand implements Callable<Integer> {
  /** How long one try of a signed request waits for its answer before the same bytes go again. */
  static final long ANSWER_MS = Resender.Policy.DEFAULT.answerTimeoutMs();
  @Mixin
  UserOptions options;

  final CliContext context;

  UserCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public final Integer call() {
    ClientSupport.Identity user = ClientSupport.identity(options.keyFile, options.login);
    Vertx vertx = Vertx.vertx();
    try {
      return run(vertx, user);
    } finally {
      ClientSupport.close(vertx);
    }
  }

  abstract int run(Vertx vertx, ClientSupport.Identity user);

  ShineClient session(Vertx vertx, ClientSupport.Identity user) {
    return ClientSupport.loggedIn(vertx, options.server, user);
  }

  /**
   * Sends one signed request until the server answers: after a 503, a 500, a 429, a timeout or a lost connection
   * the same signed bytes go again (reconnecting if needed), never newly signed ones, so a request stored before
   * its answer was lost is answered from what is stored instead of becoming a second message (PROTOCOL §3).
   */
  JsonNode untilAnswered(Vertx vertx, ClientSupport.Identity user, ShineClient first,
      Function<ShineClient, Future<JsonNode>> request) {
    Resender resender = new Resender(vertx, first, () -> ShineClient.connect(vertx, options.server)
        .compose(client -> client.login(user.login(), user.key()).map(client)), Resender.Policy.DEFAULT);
    return ClientSupport.await(resender.untilAnswered(request));
  }

  void print(JsonNode json, String text) {
    context.out().println(options.json ? json.toString() : text);
  }
}
