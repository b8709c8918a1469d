package org.shine.server.support;

import io.vertx.sqlclient.Pool;
import java.util.ArrayDeque;
import java.util.Deque;
import org.shine.server.client.ShineClient;

/**
 * What a test opened (servers, databases, stubs, clients, pools), closed in reverse order by {@link #closeAll()}.
 * A failure while closing what a failed test left behind does not hide that test's failure.
 */
public final class Opened {
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

  /** A small pool on {@code db} for assertions in SQL, closed at the end. */
  public Pool pool(TestDatabase db) {
    Pool pool = db.pool();
    opened.push(() -> pool.close().await());
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
