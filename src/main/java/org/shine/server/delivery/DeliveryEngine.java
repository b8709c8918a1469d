package org.shine.server.delivery;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import org.shine.server.config.AppConfig;
import org.shine.server.db.MicroBatcher;
import org.shine.server.db.StorageErrors;
import org.shine.server.db.SyncRepository;
import org.shine.server.db.SyncRepository.HeldItem;
import org.shine.server.directory.UserDirectory;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmFormatException;
import org.shine.server.model.CopyKey;
import org.shine.server.model.CopyWrite;
import org.shine.server.model.DeliverySchedule;
import org.shine.server.model.DeliveryState;
import org.shine.server.model.StoredUser;
import org.shine.server.model.UserCard;
import org.shine.server.peer.PeerCalls;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.Ops;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's one delivery engine (seed §4-§5, PROTOCOL §7): runs every attempt of the node, whoever produced it
 * (the request path of any delivery instance, the retry timer, a peer coming back). Producers reserve a place of
 * {@link AttemptSlots} before they hand an attempt over; the {@link AttemptBudget} then decides when it runs: at most
 * {@code delivery.maxInFlight} at once, {@code delivery.maxInFlightPerSender} of one sending login and
 * {@code delivery.maxInFlightPerDestination} calling one server (PROTOCOL §13), an attempt that must wait for its
 * sender or a destination holding no running place. An attempt: from attempt {@code askSiblingFromAttempt} on, ask
 * the sender's sibling first; re-read the recipient's routes (the first attempt of a send takes the users its
 * intake read, so a send reads each user once); store in-process for a route that is this server, and call
 * {@code ReceiveIncomingMessage} on every other route in parallel; the first ACK is delivery; the
 * {@link AttemptRecorder} records the outcome. An attempt the budget turns away (its line is full) is not made: its
 * row stays {@code accepted} for the retry worker. After a first attempt the pair is forwarded to the sender's
 * sibling, and a forward the sibling acknowledges marks the pair's outbox item synced (batched too). Confined to the
 * engine verticle's event loop.
 */
public final class DeliveryEngine {
  private static final Logger LOG = LoggerFactory.getLogger(DeliveryEngine.class);
  /** One sender's or one destination's line holds at most this share of the engine's queue. */
  private static final int LINE_SHARE = 8;
  private final AppConfig config;
  private final UserDirectory directory;
  private final CopyStore copies;
  private final SignalStore signals;
  private final PeerCalls peers;
  private final Frames frames;
  private final Events events;
  private final AttemptSlots slots;
  private final DeliverySchedule schedule;
  private final AttemptBudget budget;
  private final AttemptRecorder recorder;
  private final MicroBatcher<HeldItem, Boolean> siblingHas;
  private final MicroBatcher<HeldItem, Boolean> releaseHeld;
  private final SyncRepository outbox;

  /** The engine over the shared services of {@code module}, with its event-loop-confined stores. */
  DeliveryEngine(DeliveryModule module) {
    DeliveryServices services = module.services;
    this.config = services.config();
    this.directory = services.directory();
    this.peers = services.peers();
    this.slots = services.slots();
    this.copies = module.copies;
    this.signals = module.signals;
    this.frames = module.frames;
    this.events = module.events;
    AppConfig.Delivery delivery = config.delivery();
    this.schedule = new DeliverySchedule(delivery.scheduleMs(), delivery.askSiblingFromAttempt());
    this.budget = new AttemptBudget(delivery.maxInFlight(), delivery.maxInFlightPerSender(),
        delivery.maxInFlightPerDestination(), Math.max(1, delivery.queueCapacity() / LINE_SHARE));
    this.recorder = new AttemptRecorder(services.deliveries(), events, services.clock(), services.metrics(), schedule,
        slots.capacity());
    // forwards hold no slot: beyond the batcher's bound a forward's mark is refused and sync carries the pair instead
    this.siblingHas = module.siblingHas;
    this.releaseHeld = module.releaseHeld;
    this.outbox = services.outbox();
  }

  /**
   * Runs the attempt of {@code request} when the budget lets it; completes with the state it recorded, or
   * {@code accepted} when it was turned away. Gives the request's place of {@link AttemptSlots} back either way.
   */
  Future<DeliveryState> submit(AttemptRequest request) {
    DeliveryTask task = request.task();
    Future<DeliveryState> done = budget.enter(task.sender())
        .compose(ticket -> run(ticket, request).onComplete(ar -> budget.finished(ticket)))
        .recover(failure -> {
          if (failure != AttemptBudget.TURNED_AWAY) {
            return Future.failedFuture(failure);
          }
          LOG.debug("attempt not made: its sender's or a destination's line is full; the retry worker takes the"
              + " row [outgoingKey: {}]", task.statusKey());
          return Future.succeededFuture(DeliveryState.ACCEPTED);
        })
        .onComplete(ar -> slots.release());
    if (request.forward() != null) {
      done.onComplete(ar -> forward(request.forward(), request.sender()));
    }
    return done;
  }

  private Future<DeliveryState> run(AttemptBudget.Ticket ticket, AttemptRequest request) {
    DeliveryTask task = request.task();
    // the first attempt of a send carries the users its intake read: one directory read per send
    Future<StoredUser> sender = request.sender() != null ? Future.succeededFuture(request.sender())
        : directory.require(task.sender());
    Future<StoredUser> recipient = request.recipient() != null ? Future.succeededFuture(request.recipient())
        : directory.require(task.recipient());
    // the sibling is asked before the recipient's servers are: an answer that says delivered takes no place of theirs
    return Future.all(sender, recipient)
        .compose(v -> siblingSaysDelivered(request, sender.result()))
        .compose(siblingDelivered -> siblingDelivered ? Future.succeededFuture(true)
            : budget.toward(ticket, remoteUrls(recipient.result()))
                .compose(admitted -> callRoutes(ticket, task, recipient.result())))
        .recover(failure -> {
          if (failure == AttemptBudget.TURNED_AWAY) {
            return Future.failedFuture(failure);
          }
          if (StorageErrors.isUnavailable(failure)) {
            // the row keeps its schedule; the node logs the outage once
            LOG.debug("attempt failed before any call [outgoingKey: {}]: {}", task.statusKey(), failure.toString());
          } else {
            LOG.warn("attempt failed before any call [outgoingKey: {}]: {}", task.statusKey(), failure.toString());
          }
          return Future.succeededFuture(false);
        })
        .compose(acked -> recorder.record(task, acked, request.notifySender()));
  }

  /** The URLs an attempt to {@code recipient} calls: every route but this server. */
  private List<String> remoteUrls(StoredUser recipient) {
    return recipient.routes().stream().filter(r -> !r.serverLogin().equals(config.serverLogin()))
        .map(UserCard.Route::url).toList();
  }

  /**
   * Whether the sender's sibling says it delivered the pair: asked at the schedule's points that say so (seed §4), and
   * by the first attempt of a pair the sibling forwarded (it made its own first attempt just before: issue 18, no
   * work twice). No answer, or any other, is "not delivered": this server then tries on its own (seed §6).
   */
  private Future<Boolean> siblingSaysDelivered(AttemptRequest request, StoredUser sender) {
    DeliveryTask task = request.task();
    Optional<UserCard.Route> sibling = siblingOf(sender);
    boolean asks = request.asksSiblingFirst() || (!task.extra() && schedule.asksSiblingFirst(task.attempt()));
    if (!asks || sibling.isEmpty()) {
      return Future.succeededFuture(false);
    }
    return peers.call(sibling.get().url(), Ops.GET_DM_DELIVERY_STATUS,
            frames.object().put("messageKey", task.statusKey()))
        .map(status -> status.path("delivered").asBoolean(false))
        .otherwise(failure -> {
          LOG.debug("sibling status unavailable [outgoingKey: {}]: {}", task.statusKey(), failure.getMessage());
          return false;
        });
  }

  /** The other access server of a user, if it has one. */
  private Optional<UserCard.Route> siblingOf(StoredUser user) {
    return user.routes().stream().filter(r -> !r.serverLogin().equals(config.serverLogin())).findFirst()
        .filter(r -> user.servedBy(config.serverLogin()));
  }

  /** Whether {@code pair} still goes to {@code sibling}: always, but a repeat only while its queue row waits. */
  private Future<Boolean> owed(ForwardRequest pair, UserCard.Route sibling) {
    return !pair.onlyIfOwed() ? Future.succeededFuture(true)
        : outbox.owesPair(sibling.serverLogin(), pair.sender(), pair.baseKey(), pair.revision());
  }

  /** Every route at once; each remote call holds its destination's place of the budget until it is over. */
  private Future<Boolean> callRoutes(AttemptBudget.Ticket ticket, DeliveryTask task, StoredUser recipient) {
    List<Future<?>> calls = new ArrayList<>(2);
    String incomingB64 = null;
    for (UserCard.Route route : recipient.routes()) {
      if (route.serverLogin().equals(config.serverLogin())) {
        calls.add(storeHere(task));
      } else {
        if (incomingB64 == null) {
          incomingB64 = Base64.getEncoder().encodeToString(task.incomingBlob());
        }
        budget.calling(ticket, route.url());
        calls.add(peers.call(route.url(), Ops.RECEIVE_INCOMING_MESSAGE, frames.object()
                .put("incomingBlobB64", incomingB64)
                .put("sourceServerLogin", config.serverLogin()))
            .onComplete(ar -> budget.answered(ticket, route.url()))
            .onFailure(failure -> LOG.debug("route refused or unreachable [outgoingKey: {}, route: {}]: {}",
                task.statusKey(), route.serverLogin(), failure.getMessage())));
      }
    }
    return firstSuccess(calls);
  }

  /** A route that is this server: the copy (or receipt) is stored in-process, which is the ACK. */
  private Future<Void> storeHere(DeliveryTask task) {
    DmContainer incoming;
    try {
      incoming = DmCodec.parse(task.incomingBlob());
    } catch (DmFormatException e) {
      return Future.failedFuture(new IllegalStateException("stored incoming copy does not parse", e));
    }
    if (task.receipt()) {
      // the reader's own receipt, stored here when it was accepted: its signer is checked as a server's would be
      return directory.require(task.sender()).compose(reader -> signals.store(task.recipient(), incoming,
          reader.keys(), true, false, null, 0, () -> { })).mapEmpty();
    }
    CopyKey key = new CopyKey(task.recipient(), task.baseKey());
    return copies.writeVerified(List.of(CopyWrite.incoming(key, task.sender(), incoming.createdAtMs(),
        incoming.revision(), incoming.bytes(), false, events.incomingEntry(task.recipient(), incoming))))
        .map(written -> {
          if (written.contains(key)) {
            events.pushIncoming(task.recipient(), incoming);
          }
          return null;
        });
  }

  private static Future<Boolean> firstSuccess(List<Future<?>> calls) {
    if (calls.isEmpty()) {
      return Future.succeededFuture(false);
    }
    Promise<Boolean> first = Promise.promise();
    int[] failures = {0};
    for (Future<?> call : calls) {
      call.onComplete(ar -> {
        if (ar.succeeded()) {
          first.tryComplete(true);
        } else if (++failures[0] == calls.size()) {
          first.tryComplete(false);
        }
      });
    }
    return first.future();
  }

  /**
   * Seed §4 step 7: the whole pair to the sender's sibling; a failure is left to sync, an ACK makes the pair's
   * outbox item synced (the sibling has it).
   */
  void forward(ForwardRequest pair) {
    forward(pair, null);
  }

  /** As {@link #forward(ForwardRequest)}, with the sender as just read ({@code null}: read it now). */
  private void forward(ForwardRequest pair, StoredUser knownSender) {
    Future<StoredUser> read = knownSender != null ? Future.succeededFuture(knownSender)
        : directory.require(pair.sender());
    read.onSuccess(sender -> siblingOf(sender).ifPresent(sibling -> owed(pair, sibling)
        .compose(owed -> owed ? forwardTo(sibling, pair) : Future.succeededFuture(false))
        .onFailure(failure -> LOG.debug("forward's sync bookkeeping not done, the hold ends on its own"
            + " [baseKey: {}, sibling: {}]: {}", pair.baseKey(), sibling.serverLogin(), failure.getMessage()))));
  }

  private Future<Boolean> forwardTo(UserCard.Route sibling, ForwardRequest pair) {
    return peers.call(sibling.url(), Ops.RECEIVE_OUTCOMING_MESSAGE, frames.object()
            .put("incomingBlobB64", Base64.getEncoder().encodeToString(pair.incomingBlob()))
            .put("outgoingBlobB64", Base64.getEncoder().encodeToString(pair.outgoingBlob()))
            .put("sourceServerLogin", config.serverLogin()))
        .transform(ack -> {
          HeldItem item = HeldItem.forwardedPair(pair.sender(), pair.baseKey(), pair.revision());
          if (ack.succeeded()) {
            return siblingHas.submit(item);
          }
          LOG.debug("forward to sibling not acknowledged, sync will carry it [baseKey: {}, sibling: {}]: {}",
              pair.baseKey(), sibling.serverLogin(), ack.cause().getMessage());
          return releaseHeld.submit(item);
        });
  }
}
