package org.shine.server.delivery;

import io.vertx.core.Future;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import org.shine.server.config.AppConfig;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.model.CopyKey;
import org.shine.server.model.CopyWrite;
import org.shine.server.model.DeliveryPlan;
import org.shine.server.model.DeliveryState;
import org.shine.server.model.StoredUser;
import org.shine.server.model.UserCard;
import org.shine.server.protocol.ProtocolErrors;

/**
 * The one way a pair or a recipient's copy comes in, whatever its {@link IntakeSource} (seed §4 step 3, §6, PROTOCOL
 * §8): both users, the owner served here, the delivery row planned, the copies stored, the events, the first
 * attempt. A pair stores the sender's copy with its delivery row and outbox item, plus the recipient's copy when this
 * server is one of the recipient's routes (then the pair is {@code delivered} in the same transaction, and the
 * recipient's hub entry is written with it); a copy alone stores the recipient's copy. An identical repeat is
 * answered from the stored bytes before any check of the new; anything new is verified on the worker pool first. A
 * reserved first attempt holds the new row's lease.
 */
final class PairIntake {
  /** The stored user of a login, or a 404 {@code USER_NOT_FOUND} failure. */
  interface Users {
    Future<StoredUser> require(String login);
  }

  private final AppConfig config;
  private final Users users;
  private final CopyStore copies;
  private final EngineClient attempts;
  private final Clock clock;
  private final Events events;
  private final ClockSkew skew;
  private final AgePlan agePlan;

  PairIntake(AppConfig config, Users users, CopyStore copies, EngineClient attempts, Clock clock, Events events,
      ClockSkew skew, AgePlan agePlan) {
    this.config = Objects.requireNonNull(config);
    this.users = Objects.requireNonNull(users);
    this.copies = Objects.requireNonNull(copies);
    this.attempts = Objects.requireNonNull(attempts);
    this.clock = Objects.requireNonNull(clock);
    this.events = Objects.requireNonNull(events);
    this.skew = Objects.requireNonNull(skew);
    this.agePlan = Objects.requireNonNull(agePlan);
  }

  Future<StoredUser> requireUser(String login) {
    return users.require(login);
  }

  /**
   * Takes {@code arrival} in; the outcome says what was written and the state to answer (for a session's pair, the
   * state after its first attempt).
   */
  Future<Intake> take(Arrival arrival) {
    Future<StoredUser> author = users.require(arrival.incoming().from());
    Future<StoredUser> recipient = users.require(arrival.incoming().to());
    return Future.all(author, recipient)
        .compose(v -> plan(arrival, author.result(), recipient.result()))
        .compose(plan -> store(arrival, author.result(), recipient.result(), plan))
        .compose(stored -> announce(arrival, stored, author.result(), recipient.result()));
  }

  private Future<Plan> plan(Arrival arrival, StoredUser author, StoredUser recipient) {
    String here = config.serverLogin();
    IntakeSource source = arrival.source();
    StoredUser owner = arrival.isPair() ? author : recipient;
    if (source.checksOwnerServedHere() && !owner.servedBy(here)) {
      return Future.failedFuture(ProtocolErrors.notAccessServer(here, owner.login()));
    }
    boolean synced = source.syncedOnArrival(owner, arrival.sourceServerLogin(), here);
    if (!arrival.isPair()) {
      return Future.succeededFuture(new Plan(null, synced, false, false));
    }
    if (recipient.servedBy(here)) {
      long acceptedAt = source.plansByAge() ? arrival.outgoing().createdAtMs() : clock.millis();
      return Future.succeededFuture(new Plan(new DeliveryPlan(DeliveryState.DELIVERED, acceptedAt, 1, null, 0),
          synced, false, false));
    }
    if (source.plansByAge()) {
      return agePlan.plan(arrival.pair(), arrival.sourceUrl()).map(row -> new Plan(row, synced, false, false));
    }
    // the sender's sibling forwards after its first attempt (seed §4 step 7): what it already delivered is not sent
    // again from here (issue 18), so this server's first attempt asks it first; still trying, or no answer, and this
    // server tries on its own (seed §6). The pair is stored and the forward ACKed before that question: the
    // forward's answer never waits on a call back to its sender (under load such calls queue behind each other, the
    // forwards time out and the sibling is taken for down)
    return Future.succeededFuture(accepted(synced, source == IntakeSource.SENDER_SIBLING && synced));
  }

  /**
   * A new row accepted now, holding a first attempt's place when there is one; {@code asksSibling}: that attempt
   * asks the sender's sibling first.
   */
  private Plan accepted(boolean synced, boolean asksSibling) {
    long now = clock.millis();
    boolean attemptReserved = attempts.reserve();
    DeliveryPlan row = new DeliveryPlan(DeliveryState.ACCEPTED, now, 0, now,
        attemptReserved ? now + config.delivery().leaseMs() : 0);
    return new Plan(row, synced, attemptReserved, asksSibling);
  }

  private Future<Intake> store(Arrival arrival, StoredUser author, StoredUser recipient, Plan plan) {
    DmContainer incoming = arrival.incoming();
    DmContainer primary = arrival.primary();
    boolean pair = arrival.isPair();
    CopyKey ownerCopy = new CopyKey(arrival.owner(), incoming.baseKey());
    CopyKey recipientCopy = new CopyKey(incoming.to(), incoming.baseKey());
    boolean recipientCopyHere = !pair || recipient.servedBy(config.serverLogin());
    Supplier<List<CopyWrite>> writes = () -> {
      List<CopyWrite> both = new ArrayList<>(2);
      if (pair) {
        // a session's new pair goes to the sender's sibling by forward after its first attempt: sync waits for that
        long syncHold = arrival.source().waitsForFirstAttempt() && !plan.synced()
            ? clock.millis() + config.sync().forwardHoldMs() : 0;
        both.add(new CopyWrite(ownerCopy, DmKind.OUTGOING, incoming.to(), primary.createdAtMs(), primary.revision(),
            primary.bytes(), incoming.bytes(), plan.row(), plan.synced(), null, syncHold));
      }
      if (recipientCopyHere) {
        // the recipient's copy of a pair is new to the recipient's sibling too: its outbox item is not synced
        boolean synced = !pair && plan.synced();
        both.add(CopyWrite.incoming(recipientCopy, incoming.from(), incoming.createdAtMs(), incoming.revision(),
            incoming.bytes(), synced, events.incomingEntry(incoming.to(), incoming),
            synced ? 0 : copyHold(arrival.source(), recipient)));
      }
      return both;
    };
    List<DmContainer> signed = pair ? List.of(primary, incoming) : List.of(incoming);
    return copies.store(ownerCopy, primary.revision(), primary.bytes(), pair ? incoming.bytes() : null, signed,
            author.keys(), arrival.source().fromAuthorsServer(author, recipient, arrival.sourceServerLogin()), writes,
            arrival.source().clockRule(skew, primary))
        .map(outcome -> {
          boolean firstAttempt = plan.attemptReserved() && outcome.wrote(ownerCopy);
          if (plan.attemptReserved() && !firstAttempt) {
            attempts.release();
          }
          DeliveryState state = !pair ? null : outcome.written() ? plan.row().state()
              : outcome.storedState() == null ? DeliveryState.ACCEPTED : outcome.storedState();
          DeliveryTask task = firstAttempt ? DeliveryTask.scheduled(incoming.baseKey(), incoming.revision(),
              incoming.from(), incoming.to(), incoming.bytes(), plan.row().acceptedAtMs(), 1, 0) : null;
          return new Intake(outcome.written(), outcome.wrote(recipientCopy), state, task, plan.asksSibling());
        })
        .onFailure(failure -> {
          if (plan.attemptReserved()) {
            attempts.release();
          }
        });
  }

  private Future<Intake> announce(Arrival arrival, Intake stored, StoredUser author, StoredUser recipient) {
    DmContainer incoming = arrival.incoming();
    if (stored.recipientCopyWritten()) {
      events.pushIncoming(incoming.to(), incoming);
    }
    if (!arrival.isPair()) {
      return Future.succeededFuture(stored);
    }
    SignedPair pair = arrival.pair();
    if (!arrival.source().waitsForFirstAttempt()) {
      if (stored.written()) {
        events.pushOutgoing(pair.outgoing(), stored.state(), null);
      }
      if (stored.firstAttempt() != null) {
        attempts.submitReserved(new AttemptRequest(stored.firstAttempt(), true, null, author, recipient,
            stored.asksSiblingFirst()));
      }
      return Future.succeededFuture(stored);
    }
    // seed §4 step 7: a newly stored pair goes to the sender's sibling after the first attempt; a repeat (the sender
    // sends again what is stored here) only while the sibling is owed it: whoever stored it may have died before
    ForwardRequest forward = new ForwardRequest(pair.from(), pair.baseKey(), pair.revision(), pair.incoming().bytes(),
        pair.outgoing().bytes(), !stored.written());
    Future<DeliveryState> state;
    if (stored.firstAttempt() != null) {
      // the users just read go with the attempt, so the engine does not read them again
      state = attempts.submitReserved(new AttemptRequest(stored.firstAttempt(), false, forward, author, recipient));
    } else {
      attempts.forward(forward);
      state = Future.succeededFuture(stored.state());
    }
    if (stored.written()) {
      // the sender's other sessions learn the pair and its first state now; later changes reach them all
      state.onSuccess(s -> events.pushOutgoing(pair.outgoing(), s, arrival.sessionId()));
    }
    return state.map(stored::withState);
  }

  /**
   * When sync may offer a recipient's copy to the recipient's other server (0: at once). The sender's server hands a
   * copy to both of the recipient's servers (seed §5), so both usually store it and each would owe it to the other;
   * offered by both at once, it would cross the sync both ways, each side's ACK meeting the other's mark on the same
   * rows. So of two servers that got it from a delivery, the one whose serverLogin sorts first offers it at once and
   * the other holds its row for two sync periods: the holder's next pull finds the copy on the first server, ACKs it
   * there and drops its own held row (the sibling-has mark). A copy the first server lacks is offered by the holder
   * when its hold ends (docs/protocol.md, "The copy hold").
   */
  private long copyHold(IntakeSource source, StoredUser recipient) {
    String here = config.serverLogin();
    if (source != IntakeSource.RECIPIENT_DELIVERY) {
      return 0;
    }
    boolean holds = recipient.routes().stream().map(UserCard.Route::serverLogin)
        .anyMatch(other -> !other.equals(here) && other.compareTo(here) < 0);
    return holds ? clock.millis() + 2 * config.sync().periodMs() : 0;
  }

  /**
   * A pair's delivery row ({@code row}, null for a copy alone), whether it is synced, a held attempt place, and
   * whether that attempt asks the sender's sibling first.
   */
  private record Plan(DeliveryPlan row, boolean synced, boolean attemptReserved, boolean asksSibling) {
  }

  /**
   * What {@link #take} did: {@code written} (new or replaced revision), whether the recipient's copy was stored
   * here, the state to report (null for a copy alone), and the first attempt it made ({@code null}: none — already
   * delivered, a repeat, a synced pair, or no attempt capacity so the retry worker will take it), and whether that
   * attempt asks the sender's sibling first.
   */
  record Intake(boolean written, boolean recipientCopyWritten, DeliveryState state, DeliveryTask firstAttempt,
      boolean asksSiblingFirst) {
    Intake withState(DeliveryState answered) {
      return new Intake(written, recipientCopyWritten, answered, firstAttempt, asksSiblingFirst);
    }
  }
}
