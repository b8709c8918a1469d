package org.shine.server.delivery;

import io.vertx.core.Future;
import java.util.Objects;
import org.shine.server.dm.DmKeys;
import org.shine.server.protocol.ProtocolErrors;
import org.shine.server.protocol.ProtocolException;

/**
 * SendMessagePair (PROTOCOL §5, seed §4): checks the pair against the session and takes it in as
 * {@link IntakeSource#CLIENT} (stored with the recipient's copy when the recipient is served here, the first attempt
 * handed to the node's engine); answers on its first ACK or when every route has failed, and the engine then
 * forwards the pair to the sender's sibling.
 */
public final class SendPairService {
  private final PairIntake intake;

  SendPairService(PairIntake intake) {
    this.intake = Objects.requireNonNull(intake);
  }

  public Future<SendPairResult> send(SendPairCommand command) {
    SignedPair pair;
    try {
      pair = checked(command);
    } catch (ProtocolException e) {
      return Future.failedFuture(e);
    }
    return intake.take(Arrival.pair(IntakeSource.CLIENT, pair, null, command.sessionId(), null))
        .map(taken -> new SendPairResult(pair.baseKey(), DmKeys.incomingKey(pair.baseKey()),
            DmKeys.outgoingKey(pair.baseKey()), taken.state()));
  }

  private static SignedPair checked(SendPairCommand command) {
    SignedPair pair = SignedPair.parse(command.incomingBlob(), command.outgoingBlob());
    if (!pair.from().equals(command.login())) {
      throw ProtocolErrors.forbiddenAuthor("the pair's", pair.from(), command.login());
    }
    return pair;
  }
}
