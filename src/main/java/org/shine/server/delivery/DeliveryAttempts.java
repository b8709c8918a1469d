package org.shine.server.delivery;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
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
import org.shine.server.db.DirectoryRepository.StoredUser;
import org.shine.server.db.DmRepository.CopyKey;
import org.shine.server.db.DmRepository.CopyWrite;
import org.shine.server.directory.DirectoryCache;
import org.shine.server.directory.UserCard;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmFormatException;
import org.shine.server.peer.PeerCalls;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.Ops;
import org.shine.server.retry.DeliverySchedule;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One delivery attempt (seed §4-§5, PROTOCOL §7): from attempt {@code askSiblingFromAttempt} on, ask the sender's
 * sibling first; re-read the recipient's routes; store in-process for a route that is this server, and call
 * {@code ReceiveIncomingMessage} on every other route in parallel; the first ACK is delivery. The result is
 * recorded only if the row is still the one claimed; a late state change is pushed to the sender's sessions.
 * Attempts run through a bounded concurrency limit and a bounded queue. Confined to one event loop.
 */
public final class DeliveryAttempts {
  private static final Logger LOG = LoggerFactory.getLogger(DeliveryAttempts.class);
  private final Vertx vertx;
  private final AppConfig config;
  private final DirectoryCache directory;
  private final DeliveryRepository deliveries;
  private final CopyStore copies;
  private final SignalStore signals;
  private final PeerCalls peers;
  private final Frames frames;
  private final Clock clock;
  private final DeliverySchedule schedule;
  private final ArrayDeque<Queued> queue = new ArrayDeque<>();
  private int running;
  private int reserved;

  DeliveryAttempts(Vertx vertx, AppConfig config, DirectoryCache directory, DeliveryRepository deliveries,
      CopyStore copies, SignalStore signals, PeerCalls peers, Frames frames, Clock clock) {
    this.vertx = Objects.requireNonNull(vertx);
    this.config = Objects.requireNonNull(config);
    this.directory = Objects.requireNonNull(directory);
    this.deliveries = Objects.requireNonNull(deliveries);
    this.copies = Objects.requireNonNull(copies);
    this.signals = Objects.requireNonNull(signals);
    this.peers = Objects.requireNonNull(peers);
    this.frames = Objects.requireNonNull(frames);
    this.clock = Objects.requireNonNull(clock);
    this.schedule = new DeliverySchedule(config.delivery().scheduleMs(), config.delivery().askSiblingFromAttempt());
  }

  public DeliverySchedule schedule() {
    return schedule;
  }

  /** Free places (running or queued) for attempts right now. */
  public int capacity() {
    return config.delivery().maxInFlight() + config.delivery().queueCapacity() - running - queue.size() - reserved;
  }

  /** Reserves a place for an attempt about to be submitted; false when full (the retry worker takes it later). */
  public boolean reserve() {
    if (capacity() <= 0) {
      return false;
    }
    reserved++;
    return true;
  }

  /** Gives back a reservation that will not be used. */
  public void release() {
    reserved--;
  }

  /** Runs a reserved attempt now or when a slot frees; completes with the state it recorded. */
  public Future<DeliveryState> submitReserved(DeliveryTask task, boolean notifySender) {
    reserved--;
    Promise<DeliveryState> promise = Promise.promise();
    queue.add(new Queued(task, notifySender, promise));
    drain();
    return promise.future();
  }

  private void drain() {
    while (running < config.delivery().maxInFlight() && !queue.isEmpty()) {
      Queued next = queue.poll();
      running++;
      attempt(next.task, next.notifySender).onComplete(ar -> {
        running--;
        next.promise.handle(ar);
        drain();
      });
    }
  }

  private Future<DeliveryState> attempt(DeliveryTask task, boolean notifySender) {
    Future<StoredUser> sender = directory.require(task.sender());
    Future<StoredUser> recipient = directory.require(task.recipient());
    return Future.all(sender, recipient)
        .compose(v -> siblingSaysDelivered(task, sender.result()))
        .compose(siblingDelivered -> siblingDelivered ? Future.succeededFuture(true)
            : callRoutes(task, recipient.result()))
        .recover(failure -> {
          LOG.warn("attempt failed before any call [outgoingKey: {}]: {}", outgoingKey(task), failure.toString());
          return Future.succeededFuture(false);
        })
        .compose(acked -> record(task, acked, notifySender));
  }

  private Future<Boolean> siblingSaysDelivered(DeliveryTask task, StoredUser sender) {
    Optional<UserCard.Route> sibling = siblingOf(sender);
    if (!schedule.asksSiblingFirst(task.attempt()) || sibling.isEmpty()) {
      return Future.succeededFuture(false);
    }
    return peers.call(sibling.get().url(), Ops.GET_DM_DELIVERY_STATUS,
            frames.object().put("messageKey", task.statusKey()))
        .map(status -> status.path("delivered").asBoolean(false))
        .otherwise(failure -> {
          LOG.debug("sibling status unavailable [outgoingKey: {}]: {}", outgoingKey(task), failure.getMessage());
          return false;
        });
  }

  /** The other access server of a user, if it has one. */
  public Optional<UserCard.Route> siblingOf(StoredUser user) {
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
                outgoingKey(task), route.serverLogin(), failure.getMessage())));
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
        incoming.revision(), incoming.bytes(), false))).map(written -> {
          if (written.contains(key)) {
            Events.pushIncoming(vertx, frames, task.recipient(), incoming);
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
    DeliveryState state;
    Long next = null;
    if (acked) {
      state = DeliveryState.DELIVERED;
    } else {
      OptionalLong nextAt = schedule.nextAfter(task.acceptedAtMs(), task.attempt());
      state = nextAt.isPresent() ? DeliveryState.ACCEPTED : DeliveryState.FAILED;
      next = nextAt.isPresent() ? nextAt.getAsLong() : null;
    }
    return deliveries.finish(task.baseKey(), task.revision(), task.rowVersion(), state, task.attempt(), next,
        clock.millis()).compose(recorded -> {
          if (!recorded) {
            // another worker took the row meanwhile: report what is stored, not what this attempt saw
            LOG.debug("attempt result dropped: row changed meanwhile [outgoingKey: {}]", outgoingKey(task));
            return deliveries.stateOf(task.baseKey(), task.revision()).map(stored -> stored.orElse(state));
          }
          LOG.debug("attempt {} done [outgoingKey: {}, deliveryState: {}]", task.attempt(), outgoingKey(task),
              state.wire());
          if (state != DeliveryState.ACCEPTED && notifySender && !task.receipt()) {
            Events.pushStateChanged(vertx, frames, task.sender(), task.baseKey(), state);
          }
          if (state == DeliveryState.FAILED) {
            LOG.info("delivery failed after {} attempts [outgoingKey: {}]", task.attempt(), outgoingKey(task));
          }
          return Future.succeededFuture(state);
        });
  }

  private static String outgoingKey(DeliveryTask task) {
    return task.statusKey();
  }

  private record Queued(DeliveryTask task, boolean notifySender, Promise<DeliveryState> promise) {
  }

}
