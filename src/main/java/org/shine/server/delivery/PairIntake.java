package org.shine.server.delivery;

import io.vertx.core.Future;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import org.shine.server.config.AppConfig;
import org.shine.server.directory.UserDirectory;
import org.shine.server.dm.DmKind;
import org.shine.server.model.CopyKey;
import org.shine.server.model.CopyWrite;
import org.shine.server.model.DeliveryPlan;
import org.shine.server.model.DeliveryState;
import org.shine.server.model.StoredUser;

/**
 * Takes a checked pair into the sender's store (seed §4 step 3): the sender's copy with its delivery row and
 * outbox item, plus the recipient's copy when this server is one of the recipient's routes (then the pair is
 * {@code delivered} in the same transaction, and the recipient's hub entry is written with it). A reserved first
 * attempt holds the new row's lease.
 */
final class PairIntake {
  private final AppConfig config;
  private final UserDirectory directory;
  private final CopyStore copies;
  private final EngineClient attempts;
  private final Clock clock;
  private final Events events;

  PairIntake(AppConfig config, UserDirectory directory, CopyStore copies, EngineClient attempts, Clock clock,
      Events events) {
    this.events = Objects.requireNonNull(events);
    this.config = Objects.requireNonNull(config);
    this.directory = Objects.requireNonNull(directory);
    this.copies = Objects.requireNonNull(copies);
    this.attempts = Objects.requireNonNull(attempts);
    this.clock = Objects.requireNonNull(clock);
  }

  Future<StoredUser> requireUser(String login) {
    return directory.require(login);
  }

  /**
   * Stores the pair for its sender once it passes {@code checkNew} (not run for an identical repeat); the outcome
   * says what was written and, if so, the first attempt to run.
   */
  Future<Intake> store(SignedPair pair, StoredUser sender, StoredUser recipient, boolean synced, Runnable checkNew) {
    long now = clock.millis();
    if (recipient.servedBy(config.serverLogin())) {
      return write(pair, sender, recipient, synced, new DeliveryPlan(DeliveryState.DELIVERED, now, 1, null, 0), false,
          checkNew);
    }
    boolean attemptReserved = attempts.reserve();
    DeliveryPlan plan = new DeliveryPlan(DeliveryState.ACCEPTED, now, 0, now,
        attemptReserved ? now + config.delivery().leaseMs() : 0);
    return write(pair, sender, recipient, synced, plan, attemptReserved, checkNew);
  }

  /**
   * Stores a pair that came by sync (synced on arrival) with a delivery row planned by its age; a recipient
   * served here still gets its copy, and the pair is then delivered.
   */
  Future<Intake> storeSynced(SignedPair pair, StoredUser sender, StoredUser recipient, DeliveryPlan plan,
      Runnable checkNew) {
    DeliveryPlan effective = recipient.servedBy(config.serverLogin())
        ? new DeliveryPlan(DeliveryState.DELIVERED, plan.acceptedAtMs(), 1, null, 0) : plan;
    return write(pair, sender, recipient, true, effective, false, checkNew);
  }

  private Future<Intake> write(SignedPair pair, StoredUser sender, StoredUser recipient, boolean synced,
      DeliveryPlan plan, boolean attemptReserved, Runnable checkNew) {
    boolean recipientHere = recipient.servedBy(config.serverLogin());
    CopyKey senderCopy = new CopyKey(pair.from(), pair.baseKey());
    CopyKey recipientCopy = new CopyKey(pair.to(), pair.baseKey());
    Supplier<List<CopyWrite>> writes = () -> {
      List<CopyWrite> both = new ArrayList<>(2);
      both.add(new CopyWrite(senderCopy, DmKind.OUTGOING, pair.to(), pair.outgoing().createdAtMs(), pair.revision(),
          pair.outgoing().bytes(), pair.incoming().bytes(), plan, synced));
      if (recipientHere) {
        both.add(CopyWrite.incoming(recipientCopy, pair.from(), pair.outgoing().createdAtMs(), pair.revision(),
            pair.incoming().bytes(), false, events.incomingEntry(pair.to(), pair.incoming())));
      }
      return both;
    };
    return copies.store(senderCopy, pair.revision(), pair.outgoing().bytes(), pair.incoming().bytes(),
            List.of(pair.outgoing(), pair.incoming()), sender.verifier(), writes, checkNew)
        .map(outcome -> {
          boolean firstAttempt = attemptReserved && outcome.wrote(senderCopy);
          if (attemptReserved && !firstAttempt) {
            attempts.release();
          }
          DeliveryState state = outcome.written() ? plan.state()
              : outcome.storedState() == null ? DeliveryState.ACCEPTED : outcome.storedState();
          DeliveryTask task = firstAttempt ? DeliveryTask.scheduled(pair.baseKey(), pair.revision(), pair.from(),
              pair.to(), pair.incoming().bytes(), plan.acceptedAtMs(), 1, 0) : null;
          return new Intake(outcome.written(), outcome.wrote(recipientCopy), state, task);
        })
        .onFailure(failure -> {
          if (attemptReserved) {
            attempts.release();
          }
        });
  }

  /**
   * What {@link #store} did: {@code written} (new or replaced revision), whether the recipient's copy was stored
   * here, the state to report, and the first attempt to run ({@code null}: none now — already delivered, a
   * repeat, or no attempt capacity so the retry worker will take it).
   */
  record Intake(boolean written, boolean recipientCopyWritten, DeliveryState state, DeliveryTask firstAttempt) {
  }
}
