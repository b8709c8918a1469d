package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.shine.server.client.ContainerVerifier;
import org.shine.server.client.ShineClient;
import org.shine.server.client.Verdict;
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
    ShineClient client = session(vertx, user);
    ContainerVerifier verifier = ClientSupport.verifier(vertx, user.login(), () -> client);
    JsonNode page = ClientSupport.await(client.request("GetDirectMessages",
        ShineClient.object().put("peer", peer).put("limit", limit)));
    List<JsonNode> messages = new ArrayList<>();
    page.path("messages").forEach(messages::add);
    Collections.reverse(messages);
    List<Verdict> verdicts = ClientSupport.await(Future.all(messages.stream().map(verifier::historyEntry).toList())
        .map(all -> all.<Verdict>list()));
    for (int i = 0; i < messages.size(); i++) {
      JsonNode message = messages.get(i);
      ObjectNode annotated = message.deepCopy();
      MessageView.annotate(annotated, message.path("blobB64").asText(null), verdicts.get(i));
      print(annotated, MessageView.historyLine(message, verdicts.get(i), context.terminal()));
    }
    return 0;
  }
}
