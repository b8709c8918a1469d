package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import org.shine.server.client.MessageSealer;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.DmKeys;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code client edit}: a new revision of a message the user sent. */
@Command(name = "edit", mixinStandardHelpOptions = true,
    description = "Replace the text of a message you sent (a new revision of the same message).")
final class ClientEdit extends UserCommand {
  @Option(names = "--message", required = true, paramLabel = "KEY", description = "its key, as history prints it")
  String message;

  @Option(names = "--text", required = true, paramLabel = "TEXT", description = "the new text")
  String text;

  ClientEdit(CliContext context) {
    super(context);
  }

  @Override
  int run(Vertx vertx, ClientSupport.Identity user) {
    if (text.isBlank()) {
      throw CliFailure.usage("--text is empty: to take a message back, use client delete");
    }
    DmKeys.ParsedKey key = ClientSupport.messageKey(message);
    if (!key.from().equals(user.login())) {
      throw CliFailure.usage("only the author edits a message: " + key.baseKey() + " is " + key.from() + "'s");
    }
    ShineClient client = session(vertx, user);
    JsonNode stored = find(client, key.to(), key);
    long revision = stored.path("revision").asLong() + 1;
    MessageSealer.Bodies bodies = sealer(vertx, client, user, key.to()).bodies(user.login(), key.to(),
        key.createdAtMs(), key.nonce(), revision, text);
    requireFits(bodies, text);
    ShineClient.SignedPair pair = MessageSealer.sign(user.login(), user.key(), key.to(), key.createdAtMs(),
        key.nonce(), revision, bodies);
    JsonNode answer = untilAnswered(vertx, user, client, c -> c.sendPair(pair, ANSWER_MS));
    print(answer, Tick.of(answer.path("deliveryState").asText(), false).render(context.terminal())
        + " edited (revision " + revision + ") to " + key.to() + ": " + text + "  (" + key.baseKey() + ")");
    return 0;
  }

  /** The stored entry of one of the user's messages with {@code peer}, or {@link CliFailure#NOT_FOUND}. */
  private static JsonNode find(ShineClient client, String peer, DmKeys.ParsedKey key) {
    JsonNode page = ClientSupport.await(client.request("GetDirectMessages", ShineClient.object().put("peer", peer)
        .put("beforeCreatedAtMs", key.createdAtMs() + 1).put("limit", 200)));
    for (JsonNode entry : page.path("messages")) {
      if (entry.path("baseKey").asText().equals(key.baseKey())) {
        return entry;
      }
    }
    throw new CliFailure(CliFailure.NOT_FOUND, "no message " + key.baseKey() + " in your history with " + peer);
  }
}
