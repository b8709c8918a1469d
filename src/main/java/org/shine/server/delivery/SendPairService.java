package org.shine.server.delivery;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.shine.server.bus.Addresses;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DirectoryRepository.StoredUser;
import org.shine.server.db.DmRepository;
import org.shine.server.db.DmRepository.CopyKey;
import org.shine.server.db.DmRepository.CopyWrite;
import org.shine.server.db.DmRepository.StoredCopy;
import org.shine.server.db.MicroBatcher;
import org.shine.server.directory.DirectoryCache;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmFormatException;
import org.shine.server.dm.DmKeys;
import org.shine.server.dm.DmKind;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.Ops;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SendMessagePair (PROTOCOL §5, seed §4 steps 2-8): validates the pair, answers a repeat from the stored bytes
 * without verifying signatures again, and stores the pair with its delivery row and outbox item in one
 * transaction. A recipient served by this same server gets its copy in that transaction too, which is the
 * attempt's ACK: the message is {@code delivered} at once and the recipient's live sessions are told.
 * Concurrent sends share lookups and commits through {@link MicroBatcher}s. Confined to one event loop.
 */
public final class SendPairService {
  private static final Logger LOG = LoggerFactory.getLogger(SendPairService.class);
  private static final int MAX_BATCH = 128;
  private static final int CONCURRENT_BATCHES = 4;

  private final Vertx vertx;
  private final AppConfig config;
  private final DirectoryCache directory;
  private final DmRepository messages;
  private final Frames frames;
  private final Clock clock;
  private final MicroBatcher<CopyKey, Optional<StoredCopy>> lookups;
  private final MicroBatcher<PairWrite, Set<CopyKey>> writes;

  public SendPairService(Vertx vertx, AppConfig config, DirectoryCache directory, DmRepository messages,
      Frames frames, Clock clock) {
    this.vertx = Objects.requireNonNull(vertx);
    this.config = Objects.requireNonNull(config);
    this.directory = Objects.requireNonNull(directory);
    this.messages = Objects.requireNonNull(messages);
    this.frames = Objects.requireNonNull(frames);
    this.clock = Objects.requireNonNull(clock);
    int capacity = config.delivery().queueCapacity();
    this.lookups = new MicroBatcher<>(this::lookupBatch, key -> key, MAX_BATCH, CONCURRENT_BATCHES, capacity);
    this.writes = new MicroBatcher<>(this::writeBatch, PairWrite::baseKey, MAX_BATCH, CONCURRENT_BATCHES, capacity);
  }

  public Future<SendPairResult> send(SendPairCommand command) {
    Pair pair;
    try {
      pair = parsePair(command);
    } catch (ProtocolException e) {
      return Future.failedFuture(e);
    }
    CopyKey senderCopy = new CopyKey(command.login(), pair.baseKey());
    Future<StoredUser> sender = requireUser(pair.outgoing().from());
    Future<StoredUser> recipient = requireUser(pair.outgoing().to());
    Future<Optional<StoredCopy>> existing = lookups.submit(senderCopy);
    return Future.all(sender, recipient, existing).compose(v -> {
      Optional<SendPairResult> answered = answerFromStored(pair, existing.result());
      if (answered.isPresent()) {
        return Future.succeededFuture(answered.get());
      }
      return verifySignatures(sender.result().publicKey(), pair)
          .compose(ok -> store(pair, senderCopy, recipient.result()));
    });
  }

  private Pair parsePair(SendPairCommand command) {
    DmContainer incoming = parse(command.incomingBlob(), "incomingBlobB64");
    DmContainer outgoing = parse(command.outgoingBlob(), "outgoingBlobB64");
    if (incoming.kind() != DmKind.INCOMING || outgoing.kind() != DmKind.OUTGOING) {
      throw ProtocolException.badRequest(ErrorCode.WRONG_KIND,
          "incomingBlobB64 must be kind 1 (INCOMING) and outgoingBlobB64 kind 2 (OUTGOING)");
    }
    if (!incoming.from().equals(outgoing.from()) || !incoming.to().equals(outgoing.to())
        || incoming.createdAtMs() != outgoing.createdAtMs() || incoming.nonce() != outgoing.nonce()
        || incoming.revision() != outgoing.revision()) {
      throw ProtocolException.badRequest(ErrorCode.PAIR_MISMATCH,
          "the two copies must agree on from, to, createdAtMs, nonce and revision");
    }
    if (!outgoing.from().equals(command.login())) {
      throw new ProtocolException(Status.FORBIDDEN, ErrorCode.FORBIDDEN_AUTHOR,
          "the pair's author " + outgoing.from() + " is not the session's login " + command.login());
    }
    if (outgoing.to().equals(outgoing.from())) {
      throw ProtocolException.badRequest(ErrorCode.SELF_MESSAGE, "a message must be sent to another user");
    }
    long skew = Math.abs(outgoing.createdAtMs() - clock.millis());
    if (skew > config.delivery().maxClockSkewMs()) {
      throw ProtocolException.badRequest(ErrorCode.CLOCK_SKEW, "createdAtMs is " + skew
          + " ms away from the server clock; the limit is " + config.delivery().maxClockSkewMs() + " ms");
    }
    return new Pair(incoming, outgoing);
  }

  private static DmContainer parse(byte[] blob, String field) {
    try {
      return DmCodec.parse(blob);
    } catch (DmFormatException e) {
      if (e.tooLarge()) {
        throw new ProtocolException(Status.TOO_LARGE, ErrorCode.CONTAINER_TOO_LARGE, field + ": " + e.getMessage());
      }
      throw ProtocolException.badRequest(ErrorCode.BAD_CONTAINER, field + ": " + e.getMessage());
    }
  }

  private Future<StoredUser> requireUser(String login) {
    return directory.find(login).map(found -> found.orElseThrow(() -> new ProtocolException(Status.NOT_FOUND,
        ErrorCode.USER_NOT_FOUND, "unknown user " + login)));
  }

  /**
   * What the stored copy already answers, without a signature check: identical bytes are an ACK, a stored higher
   * revision makes this one an ignored 200, the same revision with other bytes is a 409. Empty: store it.
   */
  private Optional<SendPairResult> answerFromStored(Pair pair, Optional<StoredCopy> stored) {
    if (stored.isEmpty()) {
      return Optional.empty();
    }
    StoredCopy copy = stored.get();
    long revision = pair.outgoing().revision();
    if (copy.revision() < revision) {
      return Optional.empty();
    }
    if (copy.revision() == revision && !(Arrays.equals(copy.blob(), pair.outgoing().bytes())
        && Arrays.equals(copy.pairBlob(), pair.incoming().bytes()))) {
      throw new ProtocolException(Status.CONFLICT, ErrorCode.CONTENT_CONFLICT,
          "message " + pair.baseKey() + " revision " + revision + " is already stored with different bytes");
    }
    return Optional.of(result(pair.baseKey(), copy.deliveryState() == null ? DeliveryState.ACCEPTED
        : copy.deliveryState()));
  }

  private Future<Void> verifySignatures(byte[] authorKey, Pair pair) {
    return vertx.executeBlocking(() -> pair.outgoing().verifySignature(authorKey)
            && pair.incoming().verifySignature(authorKey), false)
        .compose(valid -> valid ? Future.succeededFuture() : Future.failedFuture(ProtocolException.badRequest(
            ErrorCode.BAD_SIGNATURE, "a signature of the pair does not verify with " + pair.outgoing().from()
                + "'s key")));
  }

  private Future<SendPairResult> store(Pair pair, CopyKey senderCopy, StoredUser recipient) {
    boolean recipientHere = recipient.servedBy(config.serverLogin());
    DmContainer out = pair.outgoing();
    DeliveryState initial = recipientHere ? DeliveryState.DELIVERED : DeliveryState.ACCEPTED;
    List<CopyWrite> copies = new ArrayList<>(2);
    copies.add(new CopyWrite(senderCopy, DmKind.OUTGOING, out.to(), out.createdAtMs(), out.revision(), out.bytes(),
        pair.incoming().bytes(), initial, false));
    CopyKey recipientCopy = new CopyKey(out.to(), pair.baseKey());
    if (recipientHere) {
      copies.add(new CopyWrite(recipientCopy, DmKind.INCOMING, out.from(), out.createdAtMs(), out.revision(),
          pair.incoming().bytes(), null, null, false));
    }
    return writes.submit(new PairWrite(pair.baseKey(), copies)).compose(written -> {
      if (written.contains(recipientCopy)) {
        pushIncoming(recipient.login(), pair.incoming());
      }
      if (written.contains(senderCopy)) {
        LOG.debug("pair stored [outgoingKey: {}, deliveryState: {}]", pair.outgoingKey(), initial.wire());
        return Future.succeededFuture(result(pair.baseKey(), initial));
      }
      // a concurrent request stored this key first: answer from what it stored
      return lookups.submit(senderCopy).map(stored -> answerFromStored(pair, stored)
          .orElseThrow(() -> new IllegalStateException("stored copy vanished for " + pair.baseKey())));
    });
  }

  private void pushIncoming(String recipient, DmContainer incoming) {
    ObjectNode payload = frames.object()
        .put("messageKey", incoming.messageKey())
        .put("baseKey", incoming.baseKey())
        .put("blobB64", Base64.getEncoder().encodeToString(incoming.bytes()));
    vertx.eventBus().publish(Addresses.userEvents(recipient), frames.event(Ops.EVENT_INCOMING_DIRECT_MESSAGE,
        payload));
  }

  private Future<List<Optional<StoredCopy>>> lookupBatch(List<CopyKey> keys) {
    return messages.findCopies(keys).map(found -> {
      List<Optional<StoredCopy>> answers = new ArrayList<>(keys.size());
      for (CopyKey key : keys) {
        answers.add(Optional.ofNullable(found.get(key)));
      }
      return answers;
    });
  }

  private Future<List<Set<CopyKey>>> writeBatch(List<PairWrite> batch) {
    List<CopyWrite> copies = new ArrayList<>(batch.size() * 2);
    for (PairWrite write : batch) {
      copies.addAll(write.copies());
    }
    return messages.storeCopies(copies, clock.millis()).map(written -> {
      List<Set<CopyKey>> answers = new ArrayList<>(batch.size());
      for (int i = 0; i < batch.size(); i++) {
        answers.add(written);
      }
      return answers;
    });
  }

  private static SendPairResult result(String baseKey, DeliveryState state) {
    return new SendPairResult(baseKey, DmKeys.incomingKey(baseKey), DmKeys.outgoingKey(baseKey), state);
  }

  private record Pair(DmContainer incoming, DmContainer outgoing) {
    String baseKey() {
      return outgoing.baseKey();
    }

    String outgoingKey() {
      return outgoing.messageKey();
    }
  }

  /** The copies of one pair that must commit together; unique per batch by base key. */
  private record PairWrite(String baseKey, List<CopyWrite> copies) {
  }
}
