package org.shine.server.delivery;

import io.vertx.core.Future;
import java.time.Clock;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.shine.server.db.SignalRepository;
import org.shine.server.db.SignalRepository.Signal;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.KeyRing;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.model.HubEntry;
import org.shine.server.protocol.ProtocolErrors;

/**
 * Stores read receipts and tombstones for an owner, idempotently: identical bytes are an ACK answered before any
 * signature check, other bytes under the same key are a 409. A receipt stored for the original sender is an
 * event for the sender, {@code DmReadReceipt}: its hub entry is written with it, and it is pushed to the sender's
 * sessions after the commit; one stored for its reader goes to the reader's other sessions as {@code DmReadByMe}.
 * Confined to one event loop.
 */
final class SignalStore {
  private final SignalRepository signals;
  private final Events events;
  private final Clock clock;
  private final SignatureVerifier verifier;
  private final SignerCheck signers;

  SignalStore(SignalRepository signals, Events events, Clock clock, SignatureVerifier verifier, SignerCheck signers) {
    this.verifier = Objects.requireNonNull(verifier);
    this.signers = Objects.requireNonNull(signers);
    this.signals = Objects.requireNonNull(signals);
    this.events = Objects.requireNonNull(events);
    this.clock = Objects.requireNonNull(clock);
  }

  /**
   * Stores {@code container} for {@code owner}; {@code deliverAs}/{@code leaseUntilMs} create the delivery row of
   * a reader's own receipt. What is not an identical repeat must first pass {@code checkNew}. Answers whether it was
   * new.
   */
  Future<Boolean> store(String owner, DmContainer container, KeyRing authorKeys, boolean authorsServer,
      boolean synced, String deliverAs, long leaseUntilMs, Runnable checkNew) {
    return store(owner, container, authorKeys, authorsServer, synced, deliverAs, leaseUntilMs, checkNew, null);
  }

  /** As above; a new receipt stored for its reader is pushed to the reader's sessions but {@code exceptSession}. */
  Future<Boolean> store(String owner, DmContainer container, KeyRing authorKeys, boolean authorsServer,
      boolean synced, String deliverAs, long leaseUntilMs, Runnable checkNew, String exceptSession) {
    return signals.find(owner, container.messageKey()).compose(existing -> {
      if (existing.isPresent()) {
        return Arrays.equals(existing.get(), container.bytes()) ? Future.succeededFuture(false)
            : Future.failedFuture(ProtocolErrors.contentConflict(container.messageKey()));
      }
      checkNew.run();
      return verifier.match(List.of(container), authorKeys).compose(match -> {
        signers.check(match, container, authorsServer);
        Signal signal = new Signal(container.messageKey(), container.kind().code(), container.from(),
            container.ref(), container.createdAtMs(), container.bytes());
        HubEntry hub = readBySender(owner, container) ? events.readReceiptEntry(owner, container) : null;
        return signals.store(owner, signal, synced, deliverAs, leaseUntilMs, clock.millis(), hub);
      });
    }).onSuccess(isNew -> {
      if (isNew && readBySender(owner, container)) {
        events.pushReadReceipt(owner, container);
      }
      if (isNew && container.kind() == DmKind.READ_RECEIPT && owner.equals(container.from())) {
        events.pushReadByMe(container, exceptSession);
      }
    });
  }

  /** A receipt stored for the original sender is an event for the sender ({@code DmReadReceipt}). */
  private static boolean readBySender(String owner, DmContainer container) {
    return container.kind() == DmKind.READ_RECEIPT && owner.equals(container.to());
  }
}
