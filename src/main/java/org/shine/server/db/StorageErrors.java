package org.shine.server.db;

import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.ClosedConnectionException;
import java.io.IOException;
import java.net.ConnectException;
import java.util.concurrent.TimeoutException;

/** Reads PostgreSQL failures: what counts as "storage unavailable" and what as a duplicate key. */
public final class StorageErrors {
  public static final String UNIQUE_VIOLATION = "23505";

  private StorageErrors() {
  }

  public static boolean isUnavailable(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof PgException pg) {
        String state = pg.getSqlState();
        return state != null && (state.startsWith("08") || state.startsWith("57P") || state.equals("53300"));
      }
      if (t instanceof ConnectException || t instanceof IOException || t instanceof TimeoutException
          || t instanceof ClosedConnectionException) {
        return true;
      }
    }
    return false;
  }

  public static boolean isDuplicateKey(Throwable failure) {
    return failure instanceof PgException pg && UNIQUE_VIOLATION.equals(pg.getSqlState());
  }
}
