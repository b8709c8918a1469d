package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKeys;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code client read}: a signed read receipt for a message sent to the user. */
@Command(name = "read", mixinStandardHelpOptions = true,
    description = "Tell the sender you read a message they sent you (a signed read receipt).")
final class ClientRead extends UserCommand {
  @Option(names = "--message", required = true, paramLabel = "KEY", description = "its key, as history prints it")
  String message;

  ClientRead(CliContext context) {
    super(context);
  }

  @Override
  int run(Vertx vertx, ClientSupport.Identity user) {
    DmKeys.ParsedKey key = ClientSupport.messageKey(message);
    if (!key.to().equals(user.login())) {
      throw CliFailure.usage("a read receipt is for a message sent to you: " + key.baseKey() + " was sent to "
          + key.to());
    }
    ShineClient client = session(vertx, user);
    DmContainer receipt = ShineClient.signReceipt(user.login(), user.key(), key.from(), key.baseKey(),
        System.currentTimeMillis());
    JsonNode answer = untilAnswered(vertx, user, client, c -> c.sendReadReceipt(receipt, ANSWER_MS));
    print(answer, "read receipt for " + key.baseKey() + " sent to " + key.from() + " ("
        + answer.path("deliveryState").asText() + ")");
    return 0;
  }
}
