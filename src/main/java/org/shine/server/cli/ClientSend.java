package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import org.shine.server.client.MessageSealer;
import org.shine.server.client.ShineClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code client send}: one text message, sent until the server answers. */
@Command(name = "send", mixinStandardHelpOptions = true, description = "Send a text message.")
final class ClientSend extends UserCommand {
  @Option(names = "--to", required = true, paramLabel = "LOGIN", description = "the recipient")
  String to;

  @Option(names = "--text", required = true, paramLabel = "TEXT", description = "the message")
  String text;

  ClientSend(CliContext context) {
    super(context);
  }

  @Override
  int run(Vertx vertx, ClientSupport.Identity user) {
    if (text.isBlank()) {
      // as the chat, which sends no empty line
      throw CliFailure.usage("--text is empty: there is nothing to send");
    }
    ShineClient client = session(vertx, user);
    MessageSealer sealer = sealer(vertx, client, user, to);
    long createdAtMs = System.currentTimeMillis();
    long nonce = ShineClient.randomNonce();
    MessageSealer.Bodies bodies = sealer.bodies(user.login(), to, createdAtMs, nonce, 0, text);
    requireFits(bodies, text);
    ShineClient.SignedPair pair = MessageSealer.sign(user.login(), user.key(), to, createdAtMs, nonce, 0, bodies);
    JsonNode answer = untilAnswered(vertx, user, client, c -> c.sendPair(pair, ANSWER_MS));
    print(answer, Tick.of(answer.path("deliveryState").asText(), false).render(context.terminal()) + " to " + to
        + ": " + text + "  (" + answer.path("baseKey").asText() + ")" + (sealer.endToEnd() ? ""
        : "  [not end-to-end encrypted: " + to + "'s card has no encryption key]"));
    return 0;
  }
}
