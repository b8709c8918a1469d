package org.shine.server.db;

import io.vertx.core.VertxException;
import io.vertx.core.http.ConnectionPoolTooBusyException;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.ClosedConnectionException;
import java.io.IOException;
import java.net.ConnectException;
import java.util.List;
import java.util.concurrent.TimeoutException;

/**
 * Reads PostgreSQL failures: what counts as "storage unavailable" (the request may succeed later, unchanged), what
 * as a full pool queue, and what as a duplicate key.
 *
 * <p>Unavailable: SQLSTATE class 08 (connection exception), 57P01–57P03 (admin or crash shutdown, cannot connect
 * now), 57014 (statement timeout), 55000 (database "is not currently accepting connections"), class 53
 * (insufficient resources: too many connections, disk full, out of memory); a refused, cut or timed-out TCP
 * connection; and the pool's own words for a connection that died under it ("Connection is not active", "Pending
 * requests failed to be sent", "Timeout waiting for connection", "Pool closed"), which it raises as plain
 * {@link VertxException}s.
 */
public final class StorageErrors {
  public static final String UNIQUE_VIOLATION = "23505";
  private static final String QUERY_CANCELED = "57014";
  private static final String NOT_ACCEPTING_CONNECTIONS = "55000";
  private static final List<String> POOL_CONNECTION_LOST = List.of(
      "Connection is not active",
      "Pending requests failed to be sent",
      "Timeout waiting for connection",
      "Pool closed",
      "Failed to read any response from the server");

  private StorageErrors() {
  }

  public static boolean isUnavailable(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof PgException pg) {
        return isUnavailableState(pg.getSqlState());
      }
      if (t instanceof ConnectException || t instanceof IOException || t instanceof TimeoutException
          || t instanceof ClosedConnectionException) {
        return true;
      }
      if (t instanceof VertxException && isConnectionLost(t.getMessage())) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  /** The pool's wait queue is full ({@code PoolOptions.maxWaitQueueSize}): nothing ran, retry later. */
  public static boolean isPoolBusy(Throwable failure) {
    return failure instanceof ConnectionPoolTooBusyException;
  }

  public static boolean isDuplicateKey(Throwable failure) {
    return failure instanceof PgException pg && UNIQUE_VIOLATION.equals(pg.getSqlState());
  }

  static boolean isUnavailableState(String state) {
    return state != null && (state.startsWith("08") || state.startsWith("57P") || state.startsWith("53")
        || state.equals(QUERY_CANCELED) || state.equals(NOT_ACCEPTING_CONNECTIONS));
  }

  private static boolean isConnectionLost(String message) {
    if (message == null) {
      return false;
    }
    for (String words : POOL_CONNECTION_LOST) {
      if (message.startsWith(words)) {
        return true;
      }
    }
    return false;
  }
}
