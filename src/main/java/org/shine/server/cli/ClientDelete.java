package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKeys;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code client delete}: a signed tombstone for the user's copy of a message. */
@Command(name = "delete", mixinStandardHelpOptions = true,
    description = "Delete your copy of a message (a signed tombstone; your second server follows).")
final class ClientDelete extends UserCommand {
  @Option(names = "--message", required = true, paramLabel = "KEY", description = "its key, as history prints it")
  String message;

  ClientDelete(CliContext context) {
    super(context);
  }

  @Override
  int run(Vertx vertx, ClientSupport.Identity user) {
    DmKeys.ParsedKey key = ClientSupport.messageKey(message);
    String copy;
    String counterpart;
    if (key.from().equals(user.login())) {
      copy = DmKeys.outgoingKey(key.baseKey());
      counterpart = key.to();
    } else if (key.to().equals(user.login())) {
      copy = DmKeys.incomingKey(key.baseKey());
      counterpart = key.from();
    } else {
      throw CliFailure.usage(key.baseKey() + " is a message between " + key.from() + " and " + key.to()
          + ", not one of " + user.login() + "'s");
    }
    ShineClient client = session(vertx, user);
    DmContainer tombstone = ShineClient.signTombstone(user.login(), user.key(), counterpart, copy,
        System.currentTimeMillis());
    JsonNode answer = untilAnswered(vertx, user, client, c -> c.deleteMessage(tombstone, ANSWER_MS));
    print(answer, "deleted your copy of " + key.baseKey());
    return 0;
  }
}
