package org.shine.server.delivery;

import io.vertx.core.Future;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.shine.server.db.DmRepository;
import org.shine.server.db.MicroBatcher;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.KeyRing;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.model.CopyKey;
import org.shine.server.model.CopyWrite;
import org.shine.server.model.DeliveryState;
import org.shine.server.model.StoredCopy;
import org.shine.server.protocol.ProtocolErrors;
import org.shine.server.protocol.ProtocolException;

/**
 * Stores signed copies by the idempotency rules of PROTOCOL §3. The owner's copy decides: identical stored bytes
 * are an ACK answered before any signature check; the same revision with other bytes is a 409; a stored higher
 * revision makes the request an ignored 200; otherwise the signatures are verified (on a worker thread) and the
 * copies are written in one transaction. Concurrent requests share lookups and commits. One per event loop.
 */
final class CopyStore {
  private static final int MAX_BATCH = 128;
  private static final int CONCURRENT_BATCHES = 4;
  private final DmRepository messages;
  private final Clock clock;
  private final SignatureVerifier verifier;
  private final SignerCheck signers;
  private final MicroBatcher<CopyKey, Optional<StoredCopy>> lookups;
  private final MicroBatcher<List<CopyWrite>, Set<CopyKey>> writes;

  CopyStore(DmRepository messages, Clock clock, SignatureVerifier verifier, SignerCheck signers, int queueCapacity) {
    this.messages = Objects.requireNonNull(messages);
    this.clock = Objects.requireNonNull(clock);
    this.verifier = Objects.requireNonNull(verifier);
    this.signers = Objects.requireNonNull(signers);
    this.lookups = new MicroBatcher<>(this::lookupBatch, key -> key, MAX_BATCH, CONCURRENT_BATCHES, queueCapacity);
    this.writes = new MicroBatcher<>(this::writeBatch, copies -> copies.get(0).key().baseKey(), MAX_BATCH,
        CONCURRENT_BATCHES, queueCapacity);
  }

  /**
   * Stores {@code copies} (the first is the owner's copy {@code primary}, with bytes {@code primaryBlob} and, for
   * an outgoing copy, {@code primaryPairBlob}) after checking {@code signed} against {@code authorKeys} ({@link
   * SignerCheck}; {@code authorsServer}: it came on a server session of the author's or the owner's servers). What is
   * not an identical repeat must first pass {@code checkNew} (it throws a {@link ProtocolException} to refuse). The
   * copies are made only when they are written (a repeat builds no hub entry).
   */
  Future<StoreOutcome> store(CopyKey primary, long revision, byte[] primaryBlob, byte[] primaryPairBlob,
      List<DmContainer> signed, KeyRing authorKeys, boolean authorsServer, Supplier<List<CopyWrite>> copies,
      Runnable checkNew) {
    return lookups.submit(primary).compose(stored -> {
      Optional<StoreOutcome> answered = answerFromStored(primary, revision, primaryBlob, primaryPairBlob, stored);
      if (answered.isPresent()) {
        return Future.succeededFuture(answered.get());
      }
      checkNew.run();
      return verify(signed, authorKeys, authorsServer).compose(v -> writes.submit(copies.get())).compose(written -> {
        if (written.contains(primary)) {
          return Future.succeededFuture(StoreOutcome.stored(written));
        }
        // a concurrent request stored this key first: answer from what it stored
        return lookups.submit(primary).map(again -> answerFromStored(primary, revision, primaryBlob,
            primaryPairBlob, again).orElseThrow(() -> new IllegalStateException("copy vanished: " + primary)));
      });
    });
  }

  /** Writes copies whose signatures were verified when they were first accepted. */
  Future<Set<CopyKey>> writeVerified(List<CopyWrite> copies) {
    return writes.submit(copies);
  }

  private static Optional<StoreOutcome> answerFromStored(CopyKey primary, long revision, byte[] blob,
      byte[] pairBlob, Optional<StoredCopy> stored) {
    if (stored.isEmpty() || stored.get().revision() < revision) {
      return Optional.empty();
    }
    StoredCopy copy = stored.get();
    if (copy.revision() == revision
        && !(Arrays.equals(copy.blob(), blob) && Arrays.equals(copy.pairBlob(), pairBlob))) {
      throw ProtocolErrors.contentConflict("message " + primary.baseKey() + " revision " + revision);
    }
    return Optional.of(StoreOutcome.alreadyStored(copy.deliveryState()));
  }

  private Future<Void> verify(List<DmContainer> signed, KeyRing authorKeys, boolean authorsServer) {
    return verifier.match(signed, authorKeys).map(match -> {
      signers.check(match, signed.get(0), authorsServer);
      return null;
    });
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

  private Future<List<Set<CopyKey>>> writeBatch(List<List<CopyWrite>> batch) {
    List<CopyWrite> copies = new ArrayList<>(batch.size() * 2);
    batch.forEach(copies::addAll);
    return messages.storeCopies(copies, clock.millis()).map(written -> {
      List<Set<CopyKey>> answers = new ArrayList<>(batch.size());
      for (int i = 0; i < batch.size(); i++) {
        answers.add(written);
      }
      return answers;
    });
  }

  /** What a store did: wrote (and which copies), or found the request already answered by stored data. */
  record StoreOutcome(boolean written, Set<CopyKey> writtenCopies, DeliveryState storedState) {
    static StoreOutcome stored(Set<CopyKey> writtenCopies) {
      return new StoreOutcome(true, writtenCopies, null);
    }

    static StoreOutcome alreadyStored(DeliveryState state) {
      return new StoreOutcome(false, Set.of(), state);
    }

    boolean wrote(CopyKey key) {
      return writtenCopies.contains(key);
    }
  }
}
