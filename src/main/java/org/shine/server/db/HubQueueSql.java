package org.shine.server.db;

/**
 * The hub part of a write statement (PROTOCOL §10): the queue entries of the events a write causes go into
 * {@code hub_queue} in the same statement, hence the same transaction, as the write itself, so a crash or a
 * failure leaves both or neither. Only users in {@code hub_subscriber} get entries.
 *
 * <p>Delivery ids are a per-user sequence ({@code hub_subscriber.last_delivery_id}) taken in the statement: the
 * subscriber's row stays locked until the commit, so the writes of one user's events commit in the order of their
 * ids, and the hub (which hands out only the oldest unacknowledged id) never hands out an id while a smaller one is
 * still uncommitted. Subscriber rows are locked in login order, so two statements never wait on each other's.
 */
final class HubQueueSql {
  private HubQueueSql() {
  }

  /**
   * The CTEs that queue the rows of {@code events} (a SELECT of {@code login, event_key, body, ord}: ord orders a
   * user's entries within the statement) stamped {@code nowParam}; an event key already queued for that user is
   * left as it is. Appended after the statement's own CTEs (with a leading comma).
   */
  static String queue(String events, String nowParam) {
    return ", hub_events AS (" + events + ")"
        + ", hub_locked AS (SELECT s.login FROM hub_subscriber s"
        + " WHERE s.login IN (SELECT login FROM hub_events) ORDER BY s.login FOR UPDATE)"
        + ", hub_next AS (UPDATE hub_subscriber s SET last_delivery_id = s.last_delivery_id + c.n"
        + " FROM (SELECT e.login, count(*) AS n FROM hub_events e"
        + " WHERE e.login IN (SELECT login FROM hub_locked) GROUP BY e.login) c"
        + " WHERE s.login = c.login RETURNING s.login, s.last_delivery_id - c.n AS before)"
        + ", hub_queued AS (INSERT INTO hub_queue (login, delivery_id, event_key, body, created_at_ms)"
        + " SELECT e.login, n.before + row_number() OVER (PARTITION BY e.login ORDER BY e.ord), e.event_key, e.body, "
        + nowParam + " FROM hub_events e JOIN hub_next n ON n.login = e.login"
        + " ON CONFLICT (login, event_key) DO NOTHING)";
  }
}
