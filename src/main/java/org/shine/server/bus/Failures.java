package org.shine.server.bus;

import org.shine.server.db.QuotaExceededException;
import org.shine.server.db.StorageBusyException;
import org.shine.server.db.StorageErrors;
import org.shine.server.dm.SignatureVerifier;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolErrors;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Maps any failure to what the wire says of it (PROTOCOL §2): protocol errors stay as they are, a full verifier or
 * storage queue is 429 {@code OVERLOADED}, storage trouble 503 {@code STORAGE_UNAVAILABLE}, anything else 500
 * {@code INTERNAL} (logged once, with its stack, here). It lives at the bus, the edge every reply crosses, so that
 * {@code protocol} knows nothing of storage.
 */
public final class Failures {
  private static final Logger LOG = LoggerFactory.getLogger(Failures.class);

  private Failures() {
  }

  public static ProtocolException classify(Throwable failure) {
    if (failure instanceof ProtocolException protocol) {
      return protocol;
    }
    if (failure instanceof SignatureVerifier.QueueFullException || failure instanceof StorageBusyException) {
      return ProtocolErrors.overloaded(failure.getMessage());
    }
    if (failure instanceof QuotaExceededException quota) {
      return new ProtocolException(Status.TOO_LARGE, ErrorCode.QUOTA_EXCEEDED, quota.getMessage());
    }
    if (StorageErrors.isPoolBusy(failure)) {
      return ProtocolErrors.overloaded("the server is overloaded; retry later");
    }
    if (StorageErrors.isUnavailable(failure)) {
      // one line per outage comes from the node's StorageHealth, not one per request
      LOG.debug("storage unavailable: {}", failure.toString());
      return ProtocolErrors.storageUnavailable();
    }
    LOG.error("internal error", failure);
    return new ProtocolException(Status.INTERNAL, ErrorCode.INTERNAL, "internal error");
  }
}
