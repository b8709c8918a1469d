package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import org.shine.server.client.MessageBody;
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
    ShineClient.SignedPair pair = ShineClient.signPair(user.login(), user.key(), to, System.currentTimeMillis(),
        ShineClient.randomNonce(), 0, MessageBody.encode(text));
    JsonNode answer = untilAnswered(vertx, user, client, c -> c.sendPair(pair, ANSWER_MS));
    print(answer, Tick.of(answer.path("deliveryState").asText(), false).render(context.terminal()) + " to " + to
        + ": " + text + "  (" + answer.path("baseKey").asText() + ")");
    return 0;
  }
}
