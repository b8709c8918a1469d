package org.shine.server.db;

/**
 * The sync queue's part of a write statement (PROTOCOL §8): an item written unsynced is owed to each sibling of its
 * owner (the owner's current routes other than this server, while this server is one of them), and its
 * {@code sync_queue} rows go in with it, in the same statement, hence the same transaction — a crash or a failure
 * leaves both or neither (the transactional outbox). The sibling's ACK deletes its row. A DM copy is its own item
 * (one queue row, no outbox item: V13); receipts, tombstones and settings are outbox items with a row per sibling.
 */
final class SyncQueueSql {
  private SyncQueueSql() {
  }

  /**
   * The CTE that queues {@code items} (a SELECT of {@code sync_id, owner, item_type, item_key, created_at_ms} of
   * unsynced outbox items just written: receipts, tombstones, settings) for the siblings of their owners,
   * {@code selfParam} naming this server: one row per item and sibling, offered at once. Appended after the
   * statement's own CTEs (with a leading comma).
   */
  static String queue(String items, String selfParam) {
    return ", sync_queued AS (INSERT INTO sync_queue (sibling, sync_id, owner, item_type, item_key, created_at_ms)"
        + " SELECT r.server_login, i.sync_id, i.owner, i.item_type, i.item_key, i.created_at_ms"
        + " FROM (" + items + ") i"
        + " JOIN user_access_servers_current r ON r.login = i.owner AND r.server_login <> " + selfParam
        + " WHERE " + served("i.owner", selfParam)
        + " ON CONFLICT DO NOTHING)";
  }

  /* the arbiter of a copy's one row (V13): unique per copy; rows of other items have one per item and sibling */
  static final String COPY_KEY = "(owner, item_key) WHERE item_type IN (1, 2)";

  /** Whether the queue row {@code alias} is a copy's: the predicate of the partial unique index sync_queue_copy. */
  static String copyRow(String alias) {
    return alias + ".item_type IN (1, 2)";
  }

  /** Whether the queue row {@code alias} is an outbox item's: the predicate of the partial index sync_queue_owner. */
  static String outboxRow(String alias) {
    return alias + ".item_type > 2";
  }

  /**
   * The CTE that owes {@code copies} (a SELECT of {@code owner, item_type, item_key, revision, created_at_ms,
   * visible_at_ms} of copies just written unsynced) to their owners' siblings: one row per copy, for the owner's other
   * route while {@code selfParam} is one of its routes ({@link #siblingOf}), else for nobody yet ({@code ''}). A
   * copy's new revision replaces its row under a new sync_id, so a sibling is offered it even after its cursor passed
   * the old one. Appended after the statement's own CTEs (with a leading comma).
   */
  static String queueCopies(String copies, String selfParam) {
    return ", sync_queued AS (" + upsertCopies(copies, selfParam) + " WHERE sync_queue.revision < EXCLUDED.revision)";
  }

  /**
   * The CTE {@code copies} that owes {@code copies} (as for {@link #queueCopies}) anew, whatever revision their rows
   * owe now: each gets a new sync_id. Its column {@code was_synced} says which copies had no row (were synced).
   */
  static String oweCopiesAgain(String copies, String selfParam) {
    return ", copies AS (" + upsertCopies(copies, selfParam) + " RETURNING xmax = 0 AS was_synced)";
  }

  /* the one row of each copy, made or replaced under a new sync_id (the condition of a replacement follows) */
  private static String upsertCopies(String copies, String selfParam) {
    return "INSERT INTO sync_queue (sibling, sync_id, owner, item_type, item_key, revision, created_at_ms,"
        + " visible_at_ms)"
        + " SELECT " + siblingOf("c.owner", selfParam) + ", nextval('sync_outbox_sync_id_seq'), c.owner,"
        + " c.item_type, c.item_key, c.revision, c.created_at_ms, c.visible_at_ms FROM (" + copies + ") c"
        + " ON CONFLICT " + COPY_KEY + " DO UPDATE SET sibling = EXCLUDED.sibling,"
        + " sync_id = EXCLUDED.sync_id, item_type = EXCLUDED.item_type, revision = EXCLUDED.revision,"
        + " created_at_ms = EXCLUDED.created_at_ms, visible_at_ms = EXCLUDED.visible_at_ms";
  }

  /**
   * Who a copy of the login in column {@code owner} is owed to: the owner's other current route while {@code self}
   * is one of its routes (the lowest serverLogin, should a card ever list more than two), else {@code ''}
   * (nobody yet). One probe of the owner's routes.
   */
  static String siblingOf(String owner, String self) {
    return "COALESCE((SELECT min(r.server_login) FILTER (WHERE r.server_login <> " + self + ")"
        + " FROM user_access_servers_current r WHERE r.login = " + owner
        + " HAVING bool_or(r.server_login = " + self + ")), '')";
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
