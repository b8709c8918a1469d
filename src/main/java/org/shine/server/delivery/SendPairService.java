package org.shine.server.delivery;

import io.vertx.core.Future;
import org.shine.server.dm.DmKeys;
import org.shine.server.model.DeliveryState;
import org.shine.server.model.StoredUser;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;

/**
 * SendMessagePair (PROTOCOL §5, seed §4): checks the pair against the session, stores it (with the recipient's
 * copy when the recipient is served here), hands the first attempt to the node's engine and answers on its first
 * ACK or when every route has failed; the engine then forwards the pair to the sender's sibling.
 */
public final class SendPairService {
  private final PairIntake intake;
  private final EngineClient engine;
  private final Events events;
  private final ClockSkew skew;

  SendPairService(DeliveryModule module) {
    this.intake = module.intake;
    this.engine = module.services.engine();
    this.events = module.events;
    this.skew = module.skew;
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
            events.pushIncoming(pair.to(), pair.incoming());
          }
          // seed §4 step 7: a newly stored pair goes to the sender's sibling after the first attempt
          ForwardRequest forward = stored.written() ? new ForwardRequest(pair.from(), pair.baseKey(),
              pair.revision(), pair.incoming().bytes(), pair.outgoing().bytes()) : null;
          Future<DeliveryState> state;
          if (stored.firstAttempt() != null) {
            state = engine.submitReserved(new AttemptRequest(stored.firstAttempt(), false, forward, sender.result(),
                recipient.result()));
          } else {
            if (forward != null) {
              engine.forward(forward);
            }
            state = Future.succeededFuture(stored.state());
          }
          if (stored.written()) {
            // the sender's other sessions learn the pair and its first state now; later changes reach them all
            state.onSuccess(s -> events.pushOutgoing(pair.outgoing(), s, command.sessionId()));
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
}
