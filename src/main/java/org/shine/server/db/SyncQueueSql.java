package org.shine.server.db;

/**
 * The sync queue's part of a write statement (PROTOCOL §8): an outbox item written unsynced is owed to each sibling of
 * its owner (the owner's current routes other than this server, while this server is one of them), and its
 * {@code sync_queue} rows go in with it, in the same statement, hence the same transaction — a crash or a failure
 * leaves both or neither (the transactional outbox). The sibling's ACK deletes its row.
 */
final class SyncQueueSql {
  private SyncQueueSql() {
  }

  /**
   * The CTE that queues {@code items} (a SELECT of {@code sync_id, owner, item_type, item_key, created_at_ms} of
   * unsynced items just written) for the siblings of their owners, {@code selfParam} naming this server. Appended
   * after the statement's own CTEs (with a leading comma). The rows are offered at once.
   */
  static String queue(String items, String selfParam) {
    return queue(items, "0", selfParam);
  }

  /**
   * As {@link #queue(String, String)}, for {@code items} that also select {@code visible_at_ms}: when a page may
   * offer each row (a pair waiting for its forward, V10).
   */
  static String queueHeld(String items, String selfParam) {
    return queue(items, "i.visible_at_ms", selfParam);
  }

  private static String queue(String items, String visibleAt, String selfParam) {
    return ", sync_queued AS (INSERT INTO sync_queue (sibling, sync_id, owner, item_type, item_key, created_at_ms,"
        + " visible_at_ms)"
        + " SELECT r.server_login, i.sync_id, i.owner, i.item_type, i.item_key, i.created_at_ms, " + visibleAt
        + " FROM (" + items + ") i"
        + " JOIN user_access_servers_current r ON r.login = i.owner AND r.server_login <> " + selfParam
        + " WHERE " + served("i.owner", selfParam)
        + " ON CONFLICT DO NOTHING)";
  }

  /**
   * The siblings of {@code self}: each other server (login and URL) that is a current route of a user {@code self}
   * serves too.
   */
  static String siblings(String self) {
    return "SELECT DISTINCT other.server_login, other.url FROM user_access_servers_current mine"
        + " JOIN user_access_servers_current other ON other.login = mine.login AND other.server_login <> " + self
        + " WHERE mine.server_login = " + self;
  }

  /** Whether {@code self} is one of the current routes of the login in column {@code owner}. */
  static String served(String owner, String self) {
    return "EXISTS (SELECT 1 FROM user_access_servers_current m WHERE m.login = " + owner
        + " AND m.server_login = " + self + ")";
  }

  /**
   * Whether the current routes of {@code q.owner} list both {@code sibling} and {@code self} (PROTOCOL §6a), checked
   * per queue row: a scalar subquery over the owner's two routes, which the planner keeps per row (it never turns it
   * into a join over every owner the sibling shares).
   */
  static String shared(String sibling, String self) {
    return "(SELECT bool_or(r.server_login = " + sibling + ") AND bool_or(r.server_login = " + self + ")"
        + " FROM user_access_servers_current r WHERE r.login = q.owner)";
  }
}
