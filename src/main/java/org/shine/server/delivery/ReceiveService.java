package org.shine.server.delivery;

import io.vertx.core.Future;
import java.util.Objects;
import java.util.Optional;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DeliveryRepository;
import org.shine.server.db.MicroBatcher;
import org.shine.server.db.SyncRepository;
import org.shine.server.db.SyncRepository.HeldItem;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKeys;
import org.shine.server.dm.DmKind;
import org.shine.server.model.CopyKey;
import org.shine.server.model.DeliveryState;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolErrors;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;

/**
 * The server-to-server operations of PROTOCOL §6: {@code ReceiveIncomingMessage} (a copy for a user served here),
 * {@code ReceiveOutcomingMessage} (a pair for a sender served here, who then gets its own delivery state and
 * attempts, seed §6) and the read-only {@code GetDmDeliveryStatus}, and the items pulled from an owner's sibling.
 * They stay open to any caller (seed §10), and every container is verified against its author's key; the commands
 * carry the source only when the gateway trusts it (an authenticated server session, PROTOCOL §6a), and an item is
 * synced on arrival only when that trusted source is the owner's sibling. Pairs and copies go through
 * {@link PairIntake}; receipts and tombstones through {@link SignalService}.
 */
public final class ReceiveService {
  private static final int STATUS_BATCH = 128;
  private static final int CONCURRENT_STATUS_BATCHES = 2;
  private final AppConfig config;
  private final PairIntake intake;
  private final DeliveryRepository deliveries;
  private final SignalService signals;
  private final MicroBatcher<HeldItem, Boolean> siblingHas;
  /** GetDmDeliveryStatus of pairs: a sibling asks about each pair it is forwarded, so concurrent ones share reads. */
  private final MicroBatcher<CopyKey, Optional<DeliveryState>> statuses;

  ReceiveService(AppConfig config, PairIntake intake, DeliveryRepository deliveries, SignalService signals,
      MicroBatcher<HeldItem, Boolean> siblingHas) {
    this.config = Objects.requireNonNull(config);
    this.intake = Objects.requireNonNull(intake);
    this.deliveries = Objects.requireNonNull(deliveries);
    this.signals = Objects.requireNonNull(signals);
    this.siblingHas = Objects.requireNonNull(siblingHas);
    this.statuses = new MicroBatcher<>(keys -> deliveries.statuses(keys)
        .map(found -> keys.stream().map(key -> Optional.ofNullable(found.get(key))).toList()), key -> key,
        STATUS_BATCH, CONCURRENT_STATUS_BATCHES, config.delivery().queueCapacity());
  }

  /** Stores a recipient's copy (or a receipt or tombstone); answers its messageKey. */
  public Future<String> receiveIncoming(ReceiveIncomingCommand command) {
    return receiveCopy(IntakeSource.RECIPIENT_DELIVERY, command.incomingBlob(), command.sourceServerLogin(), null);
  }

  /** Stores a sender's pair here and starts this server's own delivery of it. */
  public Future<SendPairResult> receiveOutgoing(ReceiveOutgoingCommand command) {
    SignedPair pair;
    try {
      pair = SignedPair.parse(command.incomingBlob(), command.outgoingBlob());
    } catch (ProtocolException e) {
      return Future.failedFuture(e);
    }
    return intake.take(Arrival.pair(IntakeSource.SENDER_SIBLING, pair, command.sourceServerLogin(), null, null))
        .map(taken -> new SendPairResult(pair.baseKey(), DmKeys.incomingKey(pair.baseKey()),
            DmKeys.outgoingKey(pair.baseKey()), taken.state()));
  }

  /**
   * Stores one item pulled from the owner's sibling (synced on arrival, so it never bounces back); the owner's
   * current routes must list both this server and that sibling. A pair gets a delivery row by its age
   * ({@link AgePlan}); a pair already stored here keeps its state.
   */
  public Future<Void> applySynced(SyncedItem item) {
    return intake.requireUser(item.owner()).compose(owner -> {
      if (!owner.servedBy(config.serverLogin()) || !owner.servedBy(item.sourceServerLogin())) {
        return Future.failedFuture(new ProtocolException(Status.FORBIDDEN, ErrorCode.NOT_SIBLING,
            item.sourceServerLogin() + " and " + config.serverLogin() + " are not both access servers of "
                + item.owner()));
      }
      return applyFromSibling(item);
    });
  }

  private Future<Void> applyFromSibling(SyncedItem item) {
    if (!item.pair()) {
      if (item.blobs().size() != 1) {
        return Future.failedFuture(ProtocolException.badRequest(ErrorCode.INVALID_FIELD,
            "an incoming, receipt or tombstone item carries one blob"));
      }
      return receiveCopy(IntakeSource.SYNC, item.blobs().get(0), item.sourceServerLogin(), item.owner()).mapEmpty();
    }
    if (item.blobs().size() != 2) {
      return Future.failedFuture(ProtocolException.badRequest(ErrorCode.INVALID_FIELD,
          "a pair item carries two blobs, incoming then outgoing"));
    }
    SignedPair pair;
    try {
      pair = SignedPair.parse(item.blobs().get(0), item.blobs().get(1));
    } catch (ProtocolException e) {
      return Future.failedFuture(e);
    }
    if (!pair.from().equals(item.owner())) {
      return Future.failedFuture(ProtocolException.badRequest(ErrorCode.INVALID_FIELD,
          "a pair item belongs to its author"));
    }
    return intake.take(Arrival.pair(IntakeSource.SYNC, pair, item.sourceServerLogin(), null, item.sourceUrl()))
        .onSuccess(taken -> siblingHolds(taken, pair.from(), SyncRepository.PAIR, pair.baseKey(), pair.revision()))
        .mapEmpty();
  }

  /**
   * An item pulled from the owner's sibling that was stored here already (same revision or a newer one): the sibling
   * has it, so this server's own copy of that revision is not owed to it (no work twice: one of the two
   * servers that both stored a copy pulls it, the other is told by the ACK, and nothing crosses back).
   */
  private void siblingHolds(PairIntake.Intake taken, String owner, int itemType, String baseKey, long revision) {
    if (!taken.written()) {
      siblingHas.submit(new HeldItem(owner, itemType, baseKey, revision));
    }
  }

  /**
   * One container for a user served here: a receipt or tombstone goes to {@link SignalService}, an incoming copy
   * into {@link PairIntake}; {@code expectedOwner}, given for a synced item, must be the copy's {@code to}.
   */
  private Future<String> receiveCopy(IntakeSource source, byte[] blob, String sourceServerLogin,
      String expectedOwner) {
    DmContainer incoming;
    try {
      incoming = SignedPair.parseContainer(blob, "incomingBlobB64");
    } catch (ProtocolException e) {
      return Future.failedFuture(e);
    }
    if (incoming.kind() == DmKind.READ_RECEIPT || incoming.kind() == DmKind.TOMBSTONE) {
      return signals.receive(incoming, expectedOwner, source == IntakeSource.SYNC, sourceServerLogin)
          .map(v -> incoming.messageKey());
    }
    if (incoming.kind() != DmKind.INCOMING) {
      return Future.failedFuture(ProtocolException.badRequest(ErrorCode.WRONG_KIND,
          "ReceiveIncomingMessage takes kind 1, 3 or 4"));
    }
    if (incoming.from().equals(incoming.to())) {
      return Future.failedFuture(ProtocolErrors.selfMessage());
    }
    if (expectedOwner != null && !expectedOwner.equals(incoming.to())) {
      return Future.failedFuture(ProtocolException.badRequest(ErrorCode.INVALID_FIELD,
          "an incoming item belongs to its recipient"));
    }
    return intake.take(Arrival.copy(source, incoming, sourceServerLogin)).map(taken -> {
      if (source == IntakeSource.SYNC) {
        siblingHolds(taken, incoming.to(), SyncRepository.INCOMING, incoming.baseKey(), incoming.revision());
      }
      return incoming.messageKey();
    });
  }

  /** {@code known}: this server holds the sender's copy; {@code delivered}: its latest revision is delivered. */
  public Future<DeliveryStatus> status(String messageKey) {
    DmKeys.ParsedKey key = DmKeys.parseMessageKey(messageKey);
    if (key == null || !(key.kind() == DmKind.OUTGOING.code() || key.kind() == DmKind.READ_RECEIPT.code())) {
      return Future.failedFuture(ProtocolException.badRequest(ErrorCode.INVALID_FIELD,
          "messageKey must be an outgoing key from|to|createdAtMs|nonce|2 (or a read receipt's, ...|3)"));
    }
    String baseKey = key.baseKey();
    Future<Optional<DeliveryState>> state = key.kind() == DmKind.OUTGOING.code()
        ? statuses.submit(new CopyKey(key.from(), baseKey)) : deliveries.stateOf(baseKey, 0);
    return state.map(s -> new DeliveryStatus(messageKey, s.isPresent(),
        s.map(value -> value == DeliveryState.DELIVERED).orElse(false), s.orElse(null)));
  }
}
