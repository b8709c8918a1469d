package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.shine.server.client.BodyReader;
import org.shine.server.client.ContainerVerifier;
import org.shine.server.client.Verdict;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code client listen}: the user's events as they arrive, verified, until Ctrl-C. */
@Command(name = "listen", mixinStandardHelpOptions = true,
    description = {"Print the user's events as they arrive until Ctrl-C.",
        "When the server goes away it says \"connection lost\" on stderr and reconnects (or, with --no-reconnect,",
        "exits with code 3).",
        "A message whose signature does not verify with its author's card shows as [! not verified: why]."})
final class ClientListen extends UserCommand {
  /** Events received and not yet printed. */
  private static final int QUEUE = 10_000;
  @Option(names = "--no-reconnect", description = "exit (code 3) when the connection is lost")
  boolean noReconnect;

  ClientListen(CliContext context) {
    super(context);
  }

  @Override
  int run(Vertx vertx, ClientSupport.Identity user) {
    // events are verified and printed in arrival order on this thread, never on the connection's event loop
    BlockingQueue<JsonNode> events = new ArrayBlockingQueue<>(QUEUE);
    LiveSession session = new LiveSession(vertx, options.server, user, context.err()::println, !noReconnect,
        event -> {
          if (!events.offer(event)) {
            context.err().println("listen: too many events at once, one was dropped (history has it)");
          }
        }, () -> { }).open();
    ContainerVerifier verifier = ClientSupport.verifier(vertx, user.login(), session::client, contacts());
    BodyReader reader = reader(user);
    context.err().println("listening as " + user.login() + " on " + options.server + " (Ctrl-C to stop)");
    try {
      while (!context.isStopped()) {
        if (session.ended().failed()) {
          throw CliErrors.classify(session.ended().cause());
        }
        JsonNode event = events.poll(200, TimeUnit.MILLISECONDS);
        if (event != null) {
          show(event, ClientSupport.await(verifier.event(event)), reader);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      session.close();
    }
    return 0;
  }

  private void show(JsonNode event, Verdict verdict, BodyReader reader) {
    JsonNode payload = event.path("payload");
    if (payload.isObject()) {
      MessageView.annotate((ObjectNode) payload, payload.path("blobB64").asText(null), verdict, reader);
    }
    print(event, EventText.describe(event, verdict, reader, context.terminal()));
  }
}
