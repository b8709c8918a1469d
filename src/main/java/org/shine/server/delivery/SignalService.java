package org.shine.server.delivery;

import io.vertx.core.Future;
import java.time.Clock;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DeliveryRepository;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKeys;
import org.shine.server.dm.DmKind;
import org.shine.server.model.DeliveryState;
import org.shine.server.model.StoredUser;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolErrors;
import org.shine.server.protocol.ProtocolException;

/**
 * Read receipts and tombstones (PROTOCOL §5, §6). A receipt (kind 3, from = reader, to = original sender, ref =
 * the read message's baseKey) is stored for the reader, synced to the reader's sibling and delivered to the
 * original sender's servers by the delivery machinery, where it marks the sender's copy read and reaches the
 * sender's sessions as {@code DmReadReceipt}. A tombstone (kind 4, ref = the messageKey of the author's own
 * copy) deletes that copy here and, by sync, on the author's sibling.
 */
public final class SignalService {
  private final AppConfig config;
  private final PairIntake users;
  private final SignalStore signals;
  private final EngineClient attempts;
  private final DeliveryRepository deliveries;
  private final Clock clock;
  private final ClockSkew skew;

  SignalService(DeliveryModule module) {
    this.skew = module.skew;
    this.config = module.services.config();
    this.users = module.intake;
    this.signals = module.signals;
    this.attempts = module.services.engine();
    this.deliveries = module.services.deliveries();
    this.clock = module.services.clock();
  }

  /** SendReadReceipt from the reader's session {@code sessionId}; answers the delivery state of the receipt. */
  public Future<SignalResult> sendReadReceipt(String login, byte[] blob, String sessionId) {
    DmContainer receipt;
    try {
      receipt = checked(blob, "receiptBlobB64", DmKind.READ_RECEIPT, login);
    } catch (ProtocolException e) {
      return Future.failedFuture(e);
    }
    Future<StoredUser> reader = users.requireUser(receipt.from());
    Future<StoredUser> sender = users.requireUser(receipt.to());
    return Future.all(reader, sender).compose(v -> {
      long now = clock.millis();
      boolean reserved = attempts.reserve();
      return signals.store(receipt.from(), receipt, reader.result().keys(), false, false, receipt.baseKey(),
              reserved ? now + config.delivery().leaseMs() : 0, skew.forSession(receipt), sessionId)
          .onFailure(failure -> {
            if (reserved) {
              attempts.release();
            }
          })
          .compose(isNew -> {
            if (isNew && reserved) {
              return attempts.submitReserved(new AttemptRequest(DeliveryTask.scheduled(receipt.baseKey(), 0,
                  receipt.from(), receipt.to(), receipt.bytes(), now, 1, 0), false, null));
            }
            if (reserved) {
              attempts.release();
            }
            // a repeat (or no attempt capacity now): report what the receipt's delivery row says
            return deliveries.stateOf(receipt.baseKey(), 0)
                .map(state -> state.orElse(DeliveryState.ACCEPTED));
          })
          .map(state -> new SignalResult(receipt.messageKey(), receipt.ref(), state));
    });
  }

  /** DeleteMessage from the author's session. */
  public Future<SignalResult> deleteMessage(String login, byte[] blob) {
    DmContainer tombstone;
    try {
      tombstone = checked(blob, "tombstoneBlobB64", DmKind.TOMBSTONE, login);
    } catch (ProtocolException e) {
      return Future.failedFuture(e);
    }
    return users.requireUser(login).compose(author -> signals.store(login, tombstone, author.keys(), false, false,
        null, 0, skew.forSession(tombstone))).map(isNew -> new SignalResult(tombstone.messageKey(), tombstone.ref(), null));
  }

  /**
   * A receipt or tombstone arriving from another server ({@code ReceiveIncomingMessage}) or from the owner's
   * sibling by sync ({@code owner} given). A receipt belongs to its recipient (the original sender) when it
   * arrives by delivery; a tombstone to its author. {@code sourceServerLogin}: the server it came from, when the
   * gateway trusts that.
   */
  public Future<Void> receive(DmContainer signal, String owner, boolean synced, String sourceServerLogin) {
    try {
      checkRef(signal);
    } catch (ProtocolException e) {
      return Future.failedFuture(e);
    }
    String effectiveOwner = owner != null ? owner
        : signal.kind() == DmKind.READ_RECEIPT ? signal.to() : signal.from();
    if (!effectiveOwner.equals(signal.from()) && !effectiveOwner.equals(signal.to())) {
      return Future.failedFuture(ProtocolException.badRequest(ErrorCode.INVALID_FIELD,
          "a receipt or tombstone belongs to its author or its counterpart"));
    }
    Future<StoredUser> author = users.requireUser(signal.from());
    Future<StoredUser> holder = users.requireUser(effectiveOwner);
    return Future.all(author, holder).compose(v -> {
      if (!holder.result().servedBy(config.serverLogin())) {
        return Future.failedFuture(ProtocolErrors.notAccessServer(config.serverLogin(), effectiveOwner));
      }
      boolean authorsServer = synced || (sourceServerLogin != null
          && (author.result().servedBy(sourceServerLogin) || holder.result().servedBy(sourceServerLogin)));
      return signals.store(effectiveOwner, signal, author.result().keys(), authorsServer, synced, null, 0,
          skew.forServerOp(signal)).mapEmpty();
    });
  }

  private DmContainer checked(byte[] blob, String field, DmKind kind, String login) {
    DmContainer container = SignedPair.parseContainer(blob, field);
    if (container.kind() != kind) {
      throw ProtocolException.badRequest(ErrorCode.WRONG_KIND, field + " must be kind " + kind.code());
    }
    if (!container.from().equals(login)) {
      throw ProtocolErrors.forbiddenAuthor("the container's", container.from(), login);
    }
    checkRef(container);
    return container;
  }

  /**
   * A receipt's ref is the baseKey of a message from its {@code to} to its {@code from}; a tombstone's ref is the
   * messageKey of its author's own copy (outgoing copy of a sent message, incoming copy of a received one).
   */
  static void checkRef(DmContainer signal) {
    boolean valid;
    if (signal.kind() == DmKind.READ_RECEIPT) {
      DmKeys.ParsedKey read = DmKeys.parseBaseKey(signal.ref());
      valid = read != null && read.from().equals(signal.to()) && read.to().equals(signal.from());
    } else if (signal.kind() == DmKind.TOMBSTONE) {
      DmKeys.ParsedKey copy = DmKeys.parseMessageKey(signal.ref());
      valid = copy != null
          && ((copy.kind() == DmKind.OUTGOING.code() && copy.from().equals(signal.from())
              && copy.to().equals(signal.to()))
          || (copy.kind() == DmKind.INCOMING.code() && copy.to().equals(signal.from())
              && copy.from().equals(signal.to())));
    } else {
      valid = false;
    }
    if (!valid) {
      throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD, signal.kind() == DmKind.READ_RECEIPT
          ? "a receipt's ref must be the baseKey of a message from its to to its from"
          : "a tombstone's ref must be the messageKey of its author's own copy");
    }
  }

  /** The stored signal's key, the key it refers to, and (receipts) the delivery state. */
  public record SignalResult(String signalKey, String ref, DeliveryState deliveryState) {
  }
}
