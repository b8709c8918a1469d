package org.shine.server.delivery;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DeliveryRepository;
import org.shine.server.db.DeliveryRepository.AttemptResult;
import org.shine.server.db.DeliveryRepository.RowKey;
import org.shine.server.db.MicroBatcher;
import org.shine.server.db.StorageErrors;
import org.shine.server.db.SyncRepository;
import org.shine.server.db.SyncRepository.ForwardedPair;
import org.shine.server.metrics.AttemptOutcome;
import org.shine.server.metrics.ShineMetrics;
import org.shine.server.metrics.Transition;
import org.shine.server.directory.DirectoryCache;
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
 * (the request path of any delivery instance, the retry timer, a peer coming back), through one concurrency limit
 * ({@code delivery.maxInFlight}) and one queue (bounded by {@link AttemptSlots}, which producers reserve before
 * they hand an attempt over). An attempt: from attempt {@code askSiblingFromAttempt} on, ask the sender's sibling
 * first; re-read the recipient's routes; store in-process for a route that is this server, and call
 * {@code ReceiveIncomingMessage} on every other route in parallel; the first ACK is delivery. Results are recorded
 * in batches (one statement for all results ready together), each only if the row is still the one claimed; a
 * late state change is pushed to the sender's sessions. After a first attempt the pair is forwarded to the
 * sender's sibling, and a forward the sibling acknowledges marks the pair's outbox item synced (batched too).
 * Confined to the engine verticle's event loop.
 */
public final class DeliveryEngine {
  private static final Logger LOG = LoggerFactory.getLogger(DeliveryEngine.class);
  private static final int MAX_BATCH = 256;
  private static final int CONCURRENT_BATCHES = 2;
  private final AppConfig config;
  private final DirectoryCache directory;
  private final DeliveryRepository deliveries;
  private final CopyStore copies;
  private final SignalStore signals;
  private final PeerCalls peers;
  private final Frames frames;
  private final Events events;
  private final Clock clock;
  private final AttemptSlots slots;
  private final ShineMetrics metrics;
  private final DeliverySchedule schedule;
  private final MicroBatcher<AttemptResult, Boolean> results;
  private final MicroBatcher<ForwardedPair, Boolean> forwards;
  private final ArrayDeque<Queued> queue = new ArrayDeque<>();
  private int running;

  DeliveryEngine(AppConfig config, DirectoryCache directory, DeliveryRepository deliveries,
      SyncRepository outbox, CopyStore copies, SignalStore signals, PeerCalls peers, Frames frames, Events events,
      Clock clock, AttemptSlots slots, ShineMetrics metrics) {
    this.events = Objects.requireNonNull(events);
    this.config = Objects.requireNonNull(config);
    this.directory = Objects.requireNonNull(directory);
    this.deliveries = Objects.requireNonNull(deliveries);
    this.copies = Objects.requireNonNull(copies);
    this.signals = Objects.requireNonNull(signals);
    this.peers = Objects.requireNonNull(peers);
    this.frames = Objects.requireNonNull(frames);
    this.clock = Objects.requireNonNull(clock);
    this.slots = Objects.requireNonNull(slots);
    this.metrics = Objects.requireNonNull(metrics);
    this.schedule = DeliverySchedule.of(config.delivery());
    // every result comes from an attempt that still holds its slot, so this queue never overflows
    this.results = new MicroBatcher<>(this::recordBatch, AttemptResult::key, MAX_BATCH, CONCURRENT_BATCHES,
        slots.capacity());
    // forwards hold no slot: beyond this bound a forward's mark is refused and sync carries the pair instead
    this.forwards = new MicroBatcher<>(batch -> outbox.markForwarded(batch).map(n -> batch.stream()
        .map(p -> Boolean.TRUE).toList()), p -> p, MAX_BATCH, CONCURRENT_BATCHES, slots.capacity());
  }

  /** Runs the attempt of {@code request} now or when a slot frees; completes with the state it recorded. */
  Future<DeliveryState> submit(AttemptRequest request) {
    Promise<DeliveryState> promise = Promise.promise();
    queue.add(new Queued(request, promise));
    drain();
    return promise.future();
  }

  private void drain() {
    while (running < config.delivery().maxInFlight() && !queue.isEmpty()) {
      Queued next = queue.poll();
      running++;
      run(next.request).onComplete(ar -> {
        running--;
        slots.release();
        next.promise.handle(ar);
        drain();
      });
    }
  }

  private Future<DeliveryState> run(AttemptRequest request) {
    DeliveryTask task = request.task();
    Future<StoredUser> sender = directory.require(task.sender());
    Future<StoredUser> recipient = directory.require(task.recipient());
    Future<DeliveryState> recorded = Future.all(sender, recipient)
        .compose(v -> siblingSaysDelivered(task, sender.result()))
        .compose(siblingDelivered -> siblingDelivered ? Future.succeededFuture(true)
            : callRoutes(task, recipient.result()))
        .recover(failure -> {
          if (StorageErrors.isUnavailable(failure)) {
            // the row keeps its schedule; the node logs the outage once
            LOG.debug("attempt failed before any call [outgoingKey: {}]: {}", task.statusKey(), failure.toString());
          } else {
            LOG.warn("attempt failed before any call [outgoingKey: {}]: {}", task.statusKey(), failure.toString());
          }
          return Future.succeededFuture(false);
        })
        .compose(acked -> record(task, acked, request.notifySender()));
    if (request.forward() != null) {
      recorded.onComplete(ar -> forward(request.forward()));
    }
    return recorded;
  }

  private Future<Boolean> siblingSaysDelivered(DeliveryTask task, StoredUser sender) {
    Optional<UserCard.Route> sibling = siblingOf(sender);
    if (task.extra() || !schedule.asksSiblingFirst(task.attempt()) || sibling.isEmpty()) {
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

  private Future<Boolean> callRoutes(DeliveryTask task, StoredUser recipient) {
    List<Future<?>> calls = new ArrayList<>(2);
    for (UserCard.Route route : recipient.routes()) {
      if (route.serverLogin().equals(config.serverLogin())) {
        calls.add(storeHere(task));
      } else {
        calls.add(peers.call(route.url(), Ops.RECEIVE_INCOMING_MESSAGE, frames.object()
                .put("incomingBlobB64", Base64.getEncoder().encodeToString(task.incomingBlob()))
                .put("sourceServerLogin", config.serverLogin()))
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
      return directory.require(task.sender()).compose(reader -> signals.store(task.recipient(), incoming,
          reader.verifier(), false, null, 0, () -> { })).mapEmpty();
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

  private Future<DeliveryState> record(DeliveryTask task, boolean acked, boolean notifySender) {
    AttemptResult result = resultOf(task, acked, notifySender);
    return results.submit(result).compose(recorded -> {
      if (!recorded) {
        metrics.attempted(task.attempt(), task.extra(), AttemptOutcome.SUPERSEDED);
        // another worker took the row meanwhile: report what is stored, not what this attempt saw
        LOG.debug("attempt result dropped: row changed meanwhile [outgoingKey: {}]", task.statusKey());
        return deliveries.stateOf(task.baseKey(), task.revision()).map(stored -> stored.orElse(result.state()));
      }
      DeliveryState state = result.state();
      metrics.attempted(task.attempt(), task.extra(), acked ? AttemptOutcome.DELIVERED : AttemptOutcome.NOT_DELIVERED);
      if (state == DeliveryState.DELIVERED) {
        metrics.transition(Transition.DELIVERED);
      } else if (state == DeliveryState.FAILED) {
        metrics.transition(Transition.FAILED);
      }
      LOG.debug("attempt {}{} done [outgoingKey: {}, deliveryState: {}]", task.attempt(), task.extra() ? " (extra)"
          : "", task.statusKey(), state.wire());
      if (owesStateChange(task, state, notifySender)) {
        events.pushStateChanged(task.sender(), task.baseKey(), state);
      }
      if (state == DeliveryState.FAILED) {
        LOG.info("delivery failed after {} attempts [outgoingKey: {}]", task.attempt(), task.statusKey());
      }
      return Future.succeededFuture(state);
    });
  }

  /**
   * A final state of a message (not a receipt) is owed to the sender's sessions and hub queue, unless the answer to
   * the sender's own request carries it ({@code notifySender} false).
   */
  private static boolean owesStateChange(DeliveryTask task, DeliveryState state, boolean notifySender) {
    return state != DeliveryState.ACCEPTED && notifySender && !task.receipt();
  }

  /**
   * What an attempt's outcome makes of its row: delivered, the next schedule point, or failed after the last; a
   * state change owed to the sender carries its hub entry, written in the same statement as the state.
   */
  private AttemptResult resultOf(DeliveryTask task, boolean acked, boolean notifySender) {
    AttemptResult result = outcomeOf(task, acked);
    if (!owesStateChange(task, result.state(), notifySender)) {
      return result;
    }
    return new AttemptResult(result.key(), result.claimedVersion(), result.state(), result.attempts(),
        result.nextAttemptAtMs(), events.stateChangedEntry(task.sender(), task.baseKey(), result.state()));
  }

  private AttemptResult outcomeOf(DeliveryTask task, boolean acked) {
    RowKey key = new RowKey(task.baseKey(), task.revision());
    if (acked) {
      return new AttemptResult(key, task.rowVersion(), DeliveryState.DELIVERED, task.attempt(), null);
    }
    if (task.extra()) {
      return new AttemptResult(key, task.rowVersion(), DeliveryState.ACCEPTED, task.attempt(),
          task.nextAttemptAtMs());
    }
    OptionalLong next = schedule.nextAfter(task.acceptedAtMs(), task.attempt());
    return next.isPresent()
        ? new AttemptResult(key, task.rowVersion(), DeliveryState.ACCEPTED, task.attempt(), next.getAsLong())
        : new AttemptResult(key, task.rowVersion(), DeliveryState.FAILED, task.attempt(), null);
  }

  private Future<List<Boolean>> recordBatch(List<AttemptResult> batch) {
    return deliveries.finishAll(batch, clock.millis()).map(recorded -> {
      List<Boolean> answers = new ArrayList<>(batch.size());
      for (AttemptResult result : batch) {
        answers.add(recorded.contains(result.key()));
      }
      return answers;
    });
  }

  /**
   * Seed §4 step 7: the whole pair to the sender's sibling; a failure is left to sync, an ACK makes the pair's
   * outbox item synced (the sibling has it).
   */
  void forward(ForwardRequest pair) {
    directory.require(pair.sender()).onSuccess(sender -> siblingOf(sender).ifPresent(sibling -> peers.call(
            sibling.url(), Ops.RECEIVE_OUTCOMING_MESSAGE, frames.object()
                .put("incomingBlobB64", Base64.getEncoder().encodeToString(pair.incomingBlob()))
                .put("outgoingBlobB64", Base64.getEncoder().encodeToString(pair.outgoingBlob()))
                .put("sourceServerLogin", config.serverLogin()))
        .compose(ack -> forwards.submit(new ForwardedPair(pair.sender(), pair.baseKey(), pair.revision())))
        .onFailure(failure -> LOG.debug("forward to sibling not acknowledged, sync will carry it"
            + " [baseKey: {}, sibling: {}]: {}", pair.baseKey(), sibling.serverLogin(), failure.getMessage()))));
  }

  private record Queued(AttemptRequest request, Promise<DeliveryState> promise) {
  }
}
