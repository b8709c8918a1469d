package org.shine.server.bus;

import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.Objects;
import org.shine.server.protocol.ProtocolException;

/**
 * A consumer's failure as its reply on the local bus: the typed error itself travels (a local reply passes the
 * object by reference), so the caller gets back the same status, code and message, with nothing parsed from text.
 */
public final class BusFailure extends ReplyException {
  private final ProtocolException error;

  BusFailure(ProtocolException error) {
    super(ReplyFailure.RECIPIENT_FAILURE, error.status(), error.getMessage());
    this.error = Objects.requireNonNull(error);
  }

  public ProtocolException error() {
    return error;
  }
}
