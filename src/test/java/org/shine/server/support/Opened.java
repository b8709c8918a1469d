package org.shine.server.support;

import io.vertx.sqlclient.Pool;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.shine.server.client.ShineClient;
import org.shine.server.db.Database;

/**
 * What a test opened (servers, databases, stubs, clients, pools), closed in reverse order by {@link #closeAll()}.
 * A failure while closing what a failed test left behind does not hide that test's failure.
 */
public final class Opened {
  private static final long SLOW_CLOSE_SECONDS = 10;
  private final Deque<AutoCloseable> opened = new ArrayDeque<>();

  public <T extends AutoCloseable> T keep(T resource) {
    opened.push(resource);
    return resource;
  }

  public ShineClient keep(ShineClient client) {
    opened.push(() -> client.close().otherwiseEmpty().await());
    return client;
  }

  /** Runs {@code close} at the end. */
  public void onClose(Runnable close) {
    opened.push(close::run);
  }

  /**
   * A small pool on {@code db}, closed at the end as the server closes its own ({@link Database#close}: never while a
   * connection is still opening; work still holding a connection is waited for {@link #SLOW_CLOSE_SECONDS}). A close
   * that takes twice that is given up, with what the database's sessions were doing printed, instead of hanging the
   * test run.
   */
  public Pool pool(TestDatabase db) {
    Pool pool = db.pool();
    opened.push(() -> {
      try {
        Database.close(pool, SLOW_CLOSE_SECONDS * 1000).await(2 * SLOW_CLOSE_SECONDS, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        System.err.println("a pool on " + db.config().database() + " did not close within " + 2 * SLOW_CLOSE_SECONDS
            + " s (given up); its database's sessions:\n" + db.activity());
      }
    });
    return pool;
  }

  public void closeAll() {
    while (!opened.isEmpty()) {
      try {
        opened.pop().close();
      } catch (Exception e) {
        // keep closing the rest
      }
    }
  }
}
