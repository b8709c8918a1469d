package org.shine.server.delivery;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.Base64;
import java.util.Objects;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DirectoryRepository.StoredUser;
import org.shine.server.dm.DmKeys;
import org.shine.server.peer.PeerCalls;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.Ops;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SendMessagePair (PROTOCOL §5, seed §4): checks the pair against the session, stores it (with the recipient's
 * copy when the recipient is served here), makes the first attempt and answers on its first ACK or when every
 * route has failed, then forwards the pair to the sender's sibling without delaying the answer.
 */
public final class SendPairService {
  private static final Logger LOG = LoggerFactory.getLogger(SendPairService.class);
  private final Vertx vertx;
  private final AppConfig config;
  private final PairIntake intake;
  private final DeliveryAttempts attempts;
  private final PeerCalls peers;
  private final Frames frames;
  private final ClockSkew skew;

  SendPairService(Vertx vertx, AppConfig config, PairIntake intake, DeliveryAttempts attempts, PeerCalls peers,
      Frames frames, ClockSkew skew) {
    this.vertx = Objects.requireNonNull(vertx);
    this.config = Objects.requireNonNull(config);
    this.intake = Objects.requireNonNull(intake);
    this.attempts = Objects.requireNonNull(attempts);
    this.peers = Objects.requireNonNull(peers);
    this.frames = Objects.requireNonNull(frames);
    this.skew = Objects.requireNonNull(skew);
  }

  public Future<SendPairResult> send(SendPairCommand command) {
    SignedPair pair;
    try {
      pair = checked(command);
    } catch (ProtocolException e) {
      return Future.failedFuture(e);
    }
    Future<StoredUser> sender = intake.requireUser(pair.from());
    Future<StoredUser> recipient = intake.requireUser(pair.to());
    return Future.all(sender, recipient)
        .compose(v -> intake.store(pair, sender.result(), recipient.result(), false,
            skew.forSession(pair.outgoing())))
        .compose(stored -> {
          if (stored.recipientCopyWritten()) {
            Events.pushIncoming(vertx, frames, pair.to(), pair.incoming());
          }
          Future<DeliveryState> state = stored.firstAttempt() == null ? Future.succeededFuture(stored.state())
              : attempts.submitReserved(stored.firstAttempt(), false);
          if (stored.written()) {
            state.onComplete(ar -> forwardToSibling(pair, sender.result()));
          }
          return state.map(s -> new SendPairResult(pair.baseKey(), DmKeys.incomingKey(pair.baseKey()),
              DmKeys.outgoingKey(pair.baseKey()), s));
        });
  }

  private SignedPair checked(SendPairCommand command) {
    SignedPair pair = SignedPair.parse(command.incomingBlob(), command.outgoingBlob());
    if (!pair.from().equals(command.login())) {
      throw new ProtocolException(Status.FORBIDDEN, ErrorCode.FORBIDDEN_AUTHOR,
          "the pair's author " + pair.from() + " is not the session's login " + command.login());
    }
    return pair;
  }

  /** Seed §4 step 7: the whole pair to the sender's second server; a failure is left to sync. */
  private void forwardToSibling(SignedPair pair, StoredUser sender) {
    attempts.siblingOf(sender).ifPresent(sibling -> peers.call(sibling.url(), Ops.RECEIVE_OUTCOMING_MESSAGE,
            frames.object()
                .put("incomingBlobB64", Base64.getEncoder().encodeToString(pair.incoming().bytes()))
                .put("outgoingBlobB64", Base64.getEncoder().encodeToString(pair.outgoing().bytes()))
                .put("sourceServerLogin", config.serverLogin()))
        .onFailure(failure -> LOG.debug("forward to sibling failed, sync will carry it [outgoingKey: {}, sibling: {}]: {}",
            pair.outgoing().messageKey(), sibling.serverLogin(), failure.getMessage())));
  }
}
