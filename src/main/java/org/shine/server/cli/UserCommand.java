package org.shine.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.concurrent.Callable;
import java.util.function.Function;
import org.shine.server.client.BodyReader;
import org.shine.server.client.MessageSealer;
import org.shine.server.client.Resender;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.DmCodec;
import picocli.CommandLine.Mixin;

/** A {@code client} subcommand that runs logged in as the user, on its own Vert.x instance. */
abstract class UserCommand implements Callable<Integer> {
  /** How long one try of a signed request waits for its answer before the same bytes go again. */
  static final long ANSWER_MS = Resender.Policy.DEFAULT.answerTimeoutMs();
  @Mixin
  UserOptions options;

  final CliContext context;
  private ContactCards contacts;

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

  /** The contacts' pinned cards, kept next to the key file. */
  ContactCards contacts() {
    if (contacts == null) {
      contacts = ContactCards.of(options.keyFile);
    }
    return contacts;
  }

  /** Reads bodies with the key file's encryption keys, marking plaintext from contacts who could have encrypted. */
  BodyReader reader(ClientSupport.Identity user) {
    ContactCards cards = contacts();
    return new BodyReader(user.login(), user.key().encryptionKeys(), login -> cards.pinned(login)
        .map(card -> card.hasNonNull("encryptionKeyB64")).orElse(false));
  }

  /**
   * How a message to {@code peer} is sealed, from the pinned cards of the peer and the user; a peer whose card does
   * not follow from the pinned one refuses ({@link CliFailure#KEYS_CHANGED}).
   */
  MessageSealer sealer(Vertx vertx, ShineClient client, ClientSupport.Identity user, String peer) {
    ContactCards.Judged theirs = ClientSupport.await(contacts().card(vertx, client, peer));
    if (theirs.blocked()) {
      throw new CliFailure(CliFailure.KEYS_CHANGED, theirs.warning() + ": not sent (if " + peer + " confirms the"
          + " change another way: client keys trust --contact " + peer + ")");
    }
    ContactCards.Judged mine = ClientSupport.await(contacts().card(vertx, client, user.login()));
    return new MessageSealer(theirs.encryptionKeyB64(), mine.encryptionKeyB64());
  }

  /** Refuses a body over the 64 KiB of a message, counted as sealed. */
  static void requireFits(MessageSealer.Bodies bodies, String text) {
    if (!bodies.fits()) {
      throw CliFailure.usage("the message is " + bodies.largest() + " bytes as sent (" + text.length()
          + " characters); a message holds at most " + DmCodec.DEFAULT_MAX_BODY + " bytes");
    }
  }

  void print(JsonNode json, String text) {
    context.out().println(options.json ? json.toString() : text);
  }
}
