package org.shine.server.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import org.shine.server.client.BodyReader;
import org.shine.server.client.ContainerVerifier;
import org.shine.server.client.ShineClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code client history}: the conversation with a peer, each message checked against its author's card. */
@Command(name = "history", mixinStandardHelpOptions = true,
    description = {"The conversation with a peer, oldest first, with the tick of each message sent.",
        "A message whose signature does not verify with its author's card shows as [! not verified: why]."})
final class ClientHistory extends UserCommand {
  @Option(names = "--peer", required = true, paramLabel = "LOGIN", description = "the other user")
  String peer;

  @Option(names = "--limit", defaultValue = "50", paramLabel = "N", description = "newest N messages (1-200)")
  int limit;

  ClientHistory(CliContext context) {
    super(context);
  }

  @Override
  int run(Vertx vertx, ClientSupport.Identity user) {
    if (limit < 1 || limit > 200) {
      throw CliFailure.usage("--limit is from 1 to 200 (one page of the server), not " + limit);
    }
    ShineClient client = session(vertx, user);
    ContainerVerifier verifier = ClientSupport.verifier(vertx, user.login(), () -> client, contacts());
    BodyReader reader = reader(user);
    for (ClientSupport.Checked checked : ClientSupport.history(client, verifier, peer, limit)) {
      ObjectNode annotated = checked.entry().deepCopy();
      MessageView.annotate(annotated, checked.entry().path("blobB64").asText(null), checked.verdict(), reader);
      print(annotated, MessageView.historyLine(checked.entry(), checked.verdict(), reader, context.terminal()));
    }
    return 0;
  }
}
