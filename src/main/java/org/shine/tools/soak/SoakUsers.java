package org.shine.tools.soak;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.shine.server.client.Resender;
import org.shine.server.client.ShineClient;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmFormatException;
import org.shine.server.dm.KeyFile;
import org.shine.tools.ledger.MessageLedger;
import org.shine.tools.support.Registrar;

/**
 * The soak's users: fresh sender/recipient pairs with cards on the servers they name (senders' routes [s1, s2],
 * recipients' [s3, s4]) relayed to the others, and a resending session for each, senders on s1/s2 and recipients
 * on s3/s4 alternating; every message pushed to a recipient session goes to the ledger.
 */
final class SoakUsers {
  /** How long the servers get to relay the cards they took to the others. */
  private static final long CARDS_SPREAD_MS = 60_000;
  /** As a patient client: a restart on this shared machine took up to 80 s, so resends span about three minutes. */
  static final Resender.Policy POLICY = new Resender.Policy(40, 200, 5_000, 30_000);

  /** One sender and its recipient, each with a resending session on one of its two servers. */
  static final class UserPair {
    final int index;
    final String sender;
    final KeyFile senderKey;
    final String recipient;
    final KeyFile recipientKey;
    Resender senderSession;
    Resender recipientSession;
    private final AtomicLong lastCreatedAtMs = new AtomicLong();

    UserPair(int index, String sender, KeyFile senderKey, String recipient, KeyFile recipientKey) {
      this.index = index;
      this.sender = sender;
      this.senderKey = senderKey;
      this.recipient = recipient;
      this.recipientKey = recipientKey;
    }

    /** createdAtMs strictly increasing per sender, so history pages split exactly at a createdAtMs. */
    long nextCreatedAtMs() {
      long now = System.currentTimeMillis();
      return lastCreatedAtMs.updateAndGet(last -> Math.max(now, last + 1));
    }
  }

  private final Vertx vertx;
  private final SoakSettings settings;
  private final MessageLedger ledger;
  private final List<UserPair> pairs = new ArrayList<>();

  SoakUsers(Vertx vertx, SoakSettings settings, MessageLedger ledger) {
    this.vertx = vertx;
    this.settings = settings;
    this.ledger = ledger;
  }

  List<UserPair> pairs() {
    return pairs;
  }

  /** Registers every pair, waits until each server knows every card, then opens their sessions. */
  void prepare() {
    String tag = Long.toString(System.currentTimeMillis() % 1_000_000, 36);
    List<Map.Entry<String, String>> names = new ArrayList<>();
    List<ShineClient> admins = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      ShineClient admin = ShineClient.connect(vertx, settings.url(i)).await();
      admins.add(admin);
      names.add(Map.entry(admin.serverLogin("soak").await(), settings.url(i)));
    }
    List<UserPair> registered = register(tag, names);
    for (UserPair pair : registered) {
      openSessions(pair);
      pairs.add(pair);
    }
    admins.forEach(ShineClient::close);
  }

  private List<UserPair> register(String tag, List<Map.Entry<String, String>> names) {
    List<Map.Entry<String, String>> senderRoutes = names.subList(0, 2);
    List<Map.Entry<String, String>> recipientRoutes = names.subList(2, 4);
    System.out.printf(Locale.ROOT, "registering %d senders (routes %s) and %d recipients (routes %s)%n",
        settings.users(), senderRoutes, settings.users(), recipientRoutes);
    List<UserPair> registered = new ArrayList<>();
    try (Registrar registrar = new Registrar(vertx)) {
      for (int i = 0; i < settings.users(); i++) {
        UserPair pair = new UserPair(i, "k" + tag + "-a" + i, KeyFile.generate("k" + tag + "-a" + i),
            "k" + tag + "-b" + i, KeyFile.generate("k" + tag + "-b" + i));
        Future.all(registrar.publish(pair.sender, pair.senderKey, senderRoutes),
            registrar.publish(pair.recipient, pair.recipientKey, recipientRoutes)).await();
        registered.add(pair);
      }
      registrar.awaitKnown(names.stream().map(Map.Entry::getValue).toList(), CARDS_SPREAD_MS);
    }
    return registered;
  }

  private void openSessions(UserPair pair) {
    int i = pair.index;
    String senderUrl = settings.url(i % 2);
    String recipientUrl = settings.url(2 + i % 2);
    pair.senderSession = new Resender(vertx, null, () -> login(senderUrl, pair.sender, pair.senderKey, null),
        POLICY);
    AtomicInteger sessions = new AtomicInteger();
    pair.recipientSession = new Resender(vertx, null, () -> login(recipientUrl, pair.recipient, pair.recipientKey,
        pair.recipient + "#" + sessions.incrementAndGet()), POLICY);
    Future.all(pair.senderSession.session(), pair.recipientSession.session()).await();
  }

  /**
   * Every user's session open again before the end sample, as at the baseline: a session lost in the last restart
   * is otherwise reopened only by that user's next request, and the end would count fewer descriptors than exist
   * under load.
   */
  void reconnectAll() {
    List<Future<?>> sessions = new ArrayList<>();
    for (UserPair pair : pairs) {
      sessions.add(pair.senderSession.session());
      sessions.add(pair.recipientSession.session());
    }
    Future.join(sessions).otherwiseEmpty().await();
  }

  /** A logged-in session; with {@code pushesAs}, its IncomingDirectMessage pushes go to the ledger under that id. */
  Future<ShineClient> login(String url, String login, KeyFile key, String pushesAs) {
    return ShineClient.connect(vertx, url).compose(client -> {
      if (pushesAs != null) {
        client.onEvent(event -> onPush(pushesAs, event));
      }
      return client.login(login, key).map(client);
    });
  }

  private void onPush(String sessionId, JsonNode event) {
    if (!"IncomingDirectMessage".equals(event.path("op").asText())) {
      return;
    }
    DmContainer container = container(event.path("payload").path("blobB64").asText());
    if (container != null) {
      ledger.pushed(sessionId, container.baseKey(), container.revision());
    }
  }

  /** The container of an event's {@code blobB64}, or null when it does not parse. */
  static DmContainer container(String blobB64) {
    try {
      return DmCodec.parse(Base64.getDecoder().decode(blobB64));
    } catch (DmFormatException | IllegalArgumentException e) {
      return null;
    }
  }
}
