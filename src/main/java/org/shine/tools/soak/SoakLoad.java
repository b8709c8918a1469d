package org.shine.tools.soak;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;
import org.shine.server.client.Resender;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.dm.DmContainer;
import org.shine.tools.ledger.MessageLedger;
import org.shine.tools.soak.SoakUsers.UserPair;

/**
 * The soak's mixed load, every 100 ms a tenth of the second's {@code --rate} while fewer than {@link #MAX_IN_FLIGHT}
 * are unanswered: half signed sends, a fifth edits, a fifth read receipts, a tenth tombstones (by the sender or the
 * recipient), each change on a recent accepted message that no other operation holds. Every answer goes to the
 * ledger and the counters.
 */
final class SoakLoad {
  private static final int MAX_IN_FLIGHT = 200;
  private static final int RECENT = 4096;

  /** An accepted message that later operations may pick: one at a time ({@link #busy}), none once deleted. */
  private static final class Live {
    final UserPair pair;
    final long createdAtMs;
    final long nonce;
    final String baseKey;
    final AtomicBoolean busy = new AtomicBoolean();
    volatile long revision;
    volatile boolean deleted;
    volatile boolean read;

    Live(UserPair pair, long createdAtMs, long nonce, String baseKey) {
      this.pair = pair;
      this.createdAtMs = createdAtMs;
      this.nonce = nonce;
      this.baseKey = baseKey;
    }
  }

  private final Vertx vertx;
  private final int rate;
  private final List<UserPair> pairs;
  private final MessageLedger ledger;
  private final SoakCounters counters;
  private final AtomicReferenceArray<Live> recent = new AtomicReferenceArray<>(RECENT);
  private final AtomicLong recentCount = new AtomicLong();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicBoolean on = new AtomicBoolean(true);
  private long timer;

  SoakLoad(Vertx vertx, int rate, List<UserPair> pairs, MessageLedger ledger, SoakCounters counters) {
    this.vertx = vertx;
    this.rate = rate;
    this.pairs = pairs;
    this.ledger = ledger;
    this.counters = counters;
  }

  void start() {
    timer = vertx.setPeriodic(100, id -> tick());
  }

  /** No new operation from now on; those in flight go on. */
  void stop() {
    on.set(false);
    vertx.cancelTimer(timer);
  }

  int inFlight() {
    return inFlight.get();
  }

  /** Until every operation is answered or given up, at most ten minutes. */
  void awaitInFlight() {
    long deadline = System.currentTimeMillis() + 600_000;
    while (inFlight.get() > 0 && System.currentTimeMillis() < deadline) {
      SoakThreads.sleepQuietly(200);
    }
  }

  private void tick() {
    if (!on.get()) {
      return;
    }
    double perTick = rate / 10.0;
    int count = (int) perTick + (ThreadLocalRandom.current().nextDouble() < perTick - (int) perTick ? 1 : 0);
    for (int i = 0; i < count && inFlight.get() < MAX_IN_FLIGHT; i++) {
      double pick = ThreadLocalRandom.current().nextDouble();
      if (pick < 0.5 || recentCount.get() == 0) {
        send();
      } else if (pick < 0.7) {
        withRecent("edit", this::edit);
      } else if (pick < 0.9) {
        withRecent("receipt", this::receipt);
      } else {
        withRecent("delete", this::delete);
      }
    }
  }

  private void send() {
    UserPair pair = pairs.get(ThreadLocalRandom.current().nextInt(pairs.size()));
    long createdAtMs = pair.nextCreatedAtMs();
    long nonce = ShineClient.randomNonce();
    SignedPair signed = ShineClient.signPair(pair.sender, pair.senderKey, pair.recipient, createdAtMs, nonce, 0,
        body(0));
    String baseKey = signed.incoming().baseKey();
    ledger.sent(baseKey, pair.sender, pair.recipient);
    track("send", pair.senderSession.sendPair(signed)).onSuccess(ok -> {
      ledger.accepted(baseKey, 0);
      remember(new Live(pair, createdAtMs, nonce, baseKey));
    });
  }

  private void edit(Live live) {
    long revision = live.revision + 1;
    SignedPair signed = ShineClient.signPair(live.pair.sender, live.pair.senderKey, live.pair.recipient,
        live.createdAtMs, live.nonce, revision, body(revision));
    finish(live, track("edit", live.pair.senderSession.sendPair(signed)).onSuccess(ok -> {
      live.revision = revision;
      ledger.accepted(live.baseKey, revision);
    }));
  }

  private void receipt(Live live) {
    if (live.read) {
      live.busy.set(false);
      return;
    }
    DmContainer receipt = ShineClient.signReceipt(live.pair.recipient, live.pair.recipientKey, live.pair.sender,
        live.baseKey, System.currentTimeMillis());
    ObjectNode payload = ShineClient.object().put("receiptBlobB64",
        Base64.getEncoder().encodeToString(receipt.bytes()));
    finish(live, track("receipt", live.pair.recipientSession.untilAnswered(client ->
        client.request("SendReadReceipt", payload, SoakUsers.POLICY.answerTimeoutMs()))).onSuccess(ok -> {
          live.read = true;
          ledger.read(live.baseKey);
        }));
  }

  private void delete(Live live) {
    boolean bySender = ThreadLocalRandom.current().nextBoolean();
    UserPair pair = live.pair;
    DmContainer tombstone = bySender
        ? ShineClient.signTombstone(pair.sender, pair.senderKey, pair.recipient, live.baseKey + "|2",
            System.currentTimeMillis())
        : ShineClient.signTombstone(pair.recipient, pair.recipientKey, pair.sender, live.baseKey + "|1",
            System.currentTimeMillis());
    ObjectNode payload = ShineClient.object().put("tombstoneBlobB64",
        Base64.getEncoder().encodeToString(tombstone.bytes()));
    Resender session = bySender ? pair.senderSession : pair.recipientSession;
    live.deleted = true;
    finish(live, track("delete", session.untilAnswered(client ->
        client.request("DeleteMessage", payload, SoakUsers.POLICY.answerTimeoutMs())))
        .onSuccess(ok -> ledger.deleted(live.baseKey, bySender)));
  }

  /** Frees the message for the next operation; a change given up unanswered leaves the ledger unsure of it. */
  private void finish(Live live, Future<JsonNode> change) {
    change.onComplete(ar -> {
      if (ar.failed()) {
        ledger.uncertain(live.baseKey);
      }
      live.busy.set(false);
    });
  }

  private static byte[] body(long revision) {
    return ("{\"v\":1,\"text\":\"soak r" + revision + " " + ShineClient.randomNonce() + "\"}")
        .getBytes(StandardCharsets.UTF_8);
  }

  private void remember(Live live) {
    recent.set((int) (recentCount.getAndIncrement() % RECENT), live);
  }

  /** Runs {@code operation} on a random recent message that is free and not deleted (none found: skipped). */
  private void withRecent(String kind, Consumer<Live> operation) {
    long filled = Math.min(recentCount.get(), RECENT);
    for (int attempt = 0; attempt < 8; attempt++) {
      Live live = recent.get(ThreadLocalRandom.current().nextInt((int) filled));
      if (live != null && !live.deleted && live.busy.compareAndSet(false, true)) {
        if (live.deleted) {
          live.busy.set(false);
          continue;
        }
        operation.accept(live);
        return;
      }
    }
    counters.op(kind + "-skipped");
  }

  private Future<JsonNode> track(String kind, Future<JsonNode> operation) {
    inFlight.incrementAndGet();
    counters.op(kind);
    return operation.onComplete(ar -> {
      inFlight.decrementAndGet();
      if (ar.failed()) {
        counters.error(kind, ar.cause());
      }
    });
  }
}
