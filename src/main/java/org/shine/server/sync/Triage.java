package org.shine.server.sync;

import java.util.Set;
import org.shine.server.db.QuotaExceededException;
import org.shine.server.metrics.QuarantineReason;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;

/**
 * Why a pulled item failed to store, and so what the puller does with it (PROTOCOL §8 v3): an item that can never
 * be stored as it is goes to quarantine (and is ACKed); a bad signature first gets the author's card refreshed; an
 * item created in the future, one whose owner or counterpart is not (yet) known or routed here, and any transient
 * failure (503, 429, timeout, storage) is left for the next run. What this server cannot name is left too: leaving
 * an item costs one look per run, quarantining a good one would lose it.
 */
enum Triage {
  /** Not ACKed; tried again in the next run. */
  RETRY,
  /** Refresh the author's card, check again, and quarantine only if it still fails. */
  BAD_SIGNATURE,
  MALFORMED,
  OVER_QUOTA,
  CONFLICT;

  /** 400-class codes of a container or item that can never be stored as it is. */
  private static final Set<String> MALFORMED_CODES = Set.of(ErrorCode.BAD_JSON, ErrorCode.MISSING_FIELD,
      ErrorCode.UNKNOWN_FIELD, ErrorCode.INVALID_FIELD, ErrorCode.BAD_BASE64, ErrorCode.BAD_CONTAINER,
      ErrorCode.WRONG_KIND, ErrorCode.PAIR_MISMATCH, ErrorCode.SELF_MESSAGE, ErrorCode.INVALID_LOGIN,
      ErrorCode.FORBIDDEN_AUTHOR, ErrorCode.CONTAINER_TOO_LARGE, ErrorCode.BODY_TOO_LARGE);

  static Triage of(Throwable failure) {
    if (failure instanceof QuotaExceededException) {
      return OVER_QUOTA;
    }
    if (!(failure instanceof ProtocolException error)) {
      return RETRY;
    }
    String code = error.code();
    if (code.equals(ErrorCode.QUOTA_EXCEEDED)) {
      return OVER_QUOTA;
    }
    if (code.equals(ErrorCode.BAD_SIGNATURE)) {
      return BAD_SIGNATURE;
    }
    if (code.equals(ErrorCode.CONTENT_CONFLICT) && error.status() == Status.CONFLICT) {
      return CONFLICT;
    }
    boolean clientError = error.status() == Status.BAD_REQUEST || error.status() == Status.FORBIDDEN
        || error.status() == Status.TOO_LARGE;
    return clientError && MALFORMED_CODES.contains(code) ? MALFORMED : RETRY;
  }

  /** The quarantine reason of this verdict (a bad signature once the card was refreshed); none for RETRY. */
  QuarantineReason reason() {
    return switch (this) {
      case MALFORMED -> QuarantineReason.MALFORMED;
      case OVER_QUOTA -> QuarantineReason.OVER_QUOTA;
      case BAD_SIGNATURE -> QuarantineReason.BAD_SIGNATURE;
      case CONFLICT -> QuarantineReason.CONFLICT;
      case RETRY -> throw new IllegalStateException("an item left for the next run has no quarantine reason");
    };
  }
}
