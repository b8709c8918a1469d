package org.shine.server.delivery;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DeliveryRepository;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKeys;
import org.shine.server.dm.DmKind;
import org.shine.server.model.CopyKey;
import org.shine.server.model.CopyWrite;
import org.shine.server.model.DeliveryPlan;
import org.shine.server.model.DeliverySchedule;
import org.shine.server.model.DeliveryState;
import org.shine.server.model.StoredUser;
import org.shine.server.peer.PeerCalls;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.Ops;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;

/**
 * The server-to-server operations of PROTOCOL §6: {@code ReceiveIncomingMessage} (a copy for a user served here),
 * {@code ReceiveOutcomingMessage} (a pair for a sender served here, who then gets its own delivery state and
 * attempts, seed §6) and the read-only {@code GetDmDeliveryStatus}. They stay open to any caller (seed §10), and
 * every container is verified against its author's key; the commands carry the source only when the gateway trusts
 * it (an authenticated server session, PROTOCOL §6a), and an item is synced on arrival only when that trusted source
 * is the owner's sibling.
 */
public final class ReceiveService {
  private final Events events;
  private final AppConfig config;
  private final PairIntake intake;
  private final CopyStore copies;
  private final EngineClient attempts;
  private final DeliverySchedule schedule;
  private final DeliveryRepository deliveries;
  private final PeerCalls peers;
  private final Frames frames;
  private final Clock clock;
  private final SignalService signals;
  private final ClockSkew skew;

  ReceiveService(DeliveryModule module, SignalService signals) {
    DeliveryServices services = module.services;
    this.skew = module.skew;
    this.events = module.events;
    this.config = services.config();
    this.intake = module.intake;
    this.copies = module.copies;
    this.attempts = services.engine();
    this.schedule = DeliverySchedule.of(config.delivery());
    this.deliveries = services.deliveries();
    this.peers = services.peers();
    this.frames = module.frames;
    this.clock = services.clock();
    this.signals = Objects.requireNonNull(signals);
  }

  /** Stores a recipient's copy; answers its messageKey. */
  public Future<String> receiveIncoming(ReceiveIncomingCommand command) {
    return receiveIncoming(command, null);
  }

  /** As {@link #receiveIncoming(ReceiveIncomingCommand)}; {@code expectedOwner}, when given, must be {@code to}. */
  private Future<String> receiveIncoming(ReceiveIncomingCommand command, String expectedOwner) {
    DmContainer incoming;
    try {
      incoming = SignedPair.parseContainer(command.incomingBlob(), "incomingBlobB64");
    } catch (ProtocolException e) {
      return Future.failedFuture(e);
    }
    if (incoming.kind() == DmKind.READ_RECEIPT || incoming.kind() == DmKind.TOMBSTONE) {
      boolean fromOwnersSibling = expectedOwner != null;
      return signals.receive(incoming, expectedOwner, fromOwnersSibling).map(v -> incoming.messageKey());
    }
    if (incoming.kind() != DmKind.INCOMING) {
      return Future.failedFuture(ProtocolException.badRequest(ErrorCode.WRONG_KIND,
          "ReceiveIncomingMessage takes kind 1, 3 or 4"));
    }
    if (incoming.from().equals(incoming.to())) {
      return Future.failedFuture(ProtocolException.badRequest(ErrorCode.SELF_MESSAGE,
          "a message must be sent to another user"));
    }
    if (expectedOwner != null && !expectedOwner.equals(incoming.to())) {
      return Future.failedFuture(ProtocolException.badRequest(ErrorCode.INVALID_FIELD,
          "an incoming item belongs to its recipient"));
    }
    Future<StoredUser> author = intake.requireUser(incoming.from());
    Future<StoredUser> owner = intake.requireUser(incoming.to());
    return Future.all(author, owner).compose(v -> {
      requireServed(owner.result());
      CopyKey key = new CopyKey(incoming.to(), incoming.baseKey());
      boolean synced = fromSibling(owner.result(), command.sourceServerLogin());
      return copies.store(key, incoming.revision(), incoming.bytes(), null, List.of(incoming),
              author.result().verifier(), () -> List.of(CopyWrite.incoming(key, incoming.from(),
                  incoming.createdAtMs(), incoming.revision(), incoming.bytes(), synced,
                  events.incomingEntry(incoming.to(), incoming))),
              skew.forServerOp(incoming))
          .map(outcome -> {
            if (outcome.wrote(key)) {
              events.pushIncoming(incoming.to(), incoming);
            }
            return incoming.messageKey();
          });
    });
  }

  /** Stores a sender's pair here and starts this server's own delivery of it. */
  public Future<SendPairResult> receiveOutgoing(ReceiveOutgoingCommand command) {
    SignedPair pair;
    try {
      pair = SignedPair.parse(command.incomingBlob(), command.outgoingBlob());
    } catch (ProtocolException e) {
      return Future.failedFuture(e);
    }
    Future<StoredUser> sender = intake.requireUser(pair.from());
    Future<StoredUser> recipient = intake.requireUser(pair.to());
    return Future.all(sender, recipient).compose(v -> {
      requireServed(sender.result());
      boolean synced = fromSibling(sender.result(), command.sourceServerLogin());
      return intake.store(pair, sender.result(), recipient.result(), synced, skew.forServerOp(pair.outgoing()));
    }).map(stored -> {
      if (stored.recipientCopyWritten()) {
        events.pushIncoming(pair.to(), pair.incoming());
      }
      if (stored.written()) {
        events.pushOutgoing(pair.outgoing(), stored.state(), null);
      }
      if (stored.firstAttempt() != null) {
        attempts.submitReserved(new AttemptRequest(stored.firstAttempt(), true, null));
      }
      return new SendPairResult(pair.baseKey(), DmKeys.incomingKey(pair.baseKey()),
          DmKeys.outgoingKey(pair.baseKey()), stored.state());
    });
  }

  /**
   * Stores one item pulled from the owner's sibling (synced on arrival, so it never bounces back); the owner's
   * current routes must list both this server and that sibling. A pair gets a
   * delivery row by its age (PROTOCOL §8): younger than the last schedule point, it joins the schedule at the
   * next point still ahead; older, one {@code GetDmDeliveryStatus} to the source decides delivered or failed
   * and nothing is sent. A pair already stored here keeps its state.
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
      return receiveIncoming(new ReceiveIncomingCommand(item.blobs().get(0), item.sourceServerLogin()),
          item.owner()).mapEmpty();
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
    Future<StoredUser> sender = intake.requireUser(pair.from());
    Future<StoredUser> recipient = intake.requireUser(pair.to());
    return Future.all(sender, recipient)
        .compose(v -> {
          requireServed(sender.result());
          return planByAge(pair, recipient.result(), item.sourceUrl());
        })
        .compose(plan -> intake.storeSynced(pair, sender.result(), recipient.result(), plan,
            skew.forServerOp(pair.outgoing())))
        .map(stored -> {
          if (stored.recipientCopyWritten()) {
            events.pushIncoming(pair.to(), pair.incoming());
          }
          if (stored.written()) {
            events.pushOutgoing(pair.outgoing(), stored.state(), null);
          }
          return null;
        });
  }

  private Future<DeliveryPlan> planByAge(SignedPair pair, StoredUser recipient, String sourceUrl) {
    long acceptedAt = pair.outgoing().createdAtMs();
    if (recipient.servedBy(config.serverLogin())) {
      return Future.succeededFuture(new DeliveryPlan(DeliveryState.DELIVERED, acceptedAt, 1, null, 0));
    }
    OptionalLong ahead = schedule.firstAttemptAhead(acceptedAt, clock.millis());
    if (ahead.isPresent()) {
      int attempt = (int) ahead.getAsLong();
      return Future.succeededFuture(new DeliveryPlan(DeliveryState.ACCEPTED, acceptedAt, attempt - 1,
          schedule.dueAt(acceptedAt, attempt), 0));
    }
    return deliveries.latestRow(pair.from(), pair.baseKey()).compose(local -> {
      if (local.isPresent() && local.get().revision() >= pair.revision()) {
        // stored already: this plan is not written, and the stored row is never reopened
        return Future.succeededFuture(aged(local.get().state(), acceptedAt));
      }
      // new here, or a newer revision than the one stored (whose row may still be accepted): the source decides
      return peers.call(sourceUrl, Ops.GET_DM_DELIVERY_STATUS,
              frames.object().put("messageKey", pair.outgoing().messageKey()))
          .map(status -> aged(sourceState(status), acceptedAt));
    });
  }

  /**
   * The source's answer to {@code GetDmDeliveryStatus}: its v2 {@code state} when it names one; from an old peer
   * (no {@code state}, or one this server does not know), {@code delivered} read as before: delivered or failed.
   */
  static DeliveryState sourceState(JsonNode status) {
    JsonNode state = status.path("state");
    if (state.isTextual()) {
      for (DeliveryState known : DeliveryState.values()) {
        if (known.wire().equals(state.asText())) {
          return known;
        }
      }
    }
    return status.path("delivered").asBoolean(false) ? DeliveryState.DELIVERED : DeliveryState.FAILED;
  }

  /**
   * The row of a pair older than the last schedule point: final as the source says, or, while the source is still
   * trying, the last schedule point counted from now (PROTOCOL §8 v2). The source's own last attempt comes within
   * one schedule span from now, so ours, which asks the source first, comes no earlier and finds its final state.
   */
  private DeliveryPlan aged(DeliveryState state, long createdAtMs) {
    if (state == DeliveryState.ACCEPTED) {
      long now = clock.millis();
      return new DeliveryPlan(DeliveryState.ACCEPTED, now, schedule.attempts() - 1,
          schedule.dueAt(now, schedule.attempts()), 0);
    }
    return new DeliveryPlan(state, createdAtMs, schedule.attempts(), null, 0);
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
        ? deliveries.status(key.from(), baseKey) : deliveries.stateOf(baseKey, 0);
    return state.map(s -> new DeliveryStatus(messageKey, s.isPresent(),
        s.map(value -> value == DeliveryState.DELIVERED).orElse(false), s.orElse(null)));
  }

  private void requireServed(StoredUser user) {
    if (!user.servedBy(config.serverLogin())) {
      throw new ProtocolException(Status.MISDIRECTED, ErrorCode.NOT_ACCESS_SERVER,
          config.serverLogin() + " is not an access server of " + user.login());
    }
  }

  private boolean fromSibling(StoredUser owner, String sourceServerLogin) {
    return sourceServerLogin != null && !sourceServerLogin.equals(config.serverLogin())
        && owner.servedBy(sourceServerLogin);
  }
}
