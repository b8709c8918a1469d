package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * SQL of operating a node (PROTOCOL §12): the row counts behind the sampled gauges and the admin API's reads. The
 * counts read only backlogs (accepted delivery rows through a partial index, the sync queue, unacknowledged hub
 * events), so their cost grows with the backlog, never with the history.
 */
public final class OpsRepository {
  private static final String DELIVERY_COUNTS =
      "SELECT count(*) FILTER (WHERE next_attempt_at_ms <= $1), count(*) FROM dm_delivery WHERE state = 'accepted'";
  private static final String HUB_QUEUE_DEPTH = "SELECT count(*) FROM hub_queue WHERE NOT acked";
  /*
   * every sibling (a server that shares a user with this one) with its queue rows, of owners routed to both it and
   * this server: 0 when nothing is owed
   */
  private static final String SYNC_LAG =
      "SELECT s.server_login, (SELECT count(*) FROM sync_queue q WHERE q.sibling = s.server_login AND "
          + SyncQueueSql.shared("q.sibling", "$1") + ")"
          + " FROM (SELECT DISTINCT server_login FROM (" + SyncQueueSql.siblings("$1") + ") known) s";
  /* a copy's row and an outbox item's are counted through their own partial index each (V13) */
  private static final String USER_LAG =
      "SELECT other.server_login,"
          + " (SELECT count(*) FROM sync_queue q WHERE q.owner = other.login AND q.sibling = other.server_login"
          + " AND " + SyncQueueSql.copyRow("q") + ")"
          + " + (SELECT count(*) FROM sync_queue q WHERE q.owner = other.login AND q.sibling = other.server_login"
          + " AND " + SyncQueueSql.outboxRow("q") + ")"
          + " FROM user_access_servers_current other WHERE other.login = $1 AND other.server_login <> $2";
  private static final String DELIVERIES =
      "SELECT base_key, revision, owner, state, accepted_at_ms, attempts, next_attempt_at_ms, updated_at_ms"
          + " FROM dm_delivery WHERE state = $1 ORDER BY accepted_at_ms, base_key LIMIT $2";
  private static final String SERVER_URL =
      "SELECT url FROM user_access_servers_current WHERE server_login = $1 LIMIT 1";

  private final Pool pool;

  public OpsRepository(Pool pool) {
    this.pool = Objects.requireNonNull(pool);
  }

  /** Accepted delivery rows due at {@code nowMs}, and accepted rows in all. */
  public Future<DeliveryCounts> deliveryCounts(long nowMs) {
    return pool.preparedQuery(DELIVERY_COUNTS).execute(Tuple.of(nowMs)).map(rows -> {
      Row row = rows.iterator().next();
      return new DeliveryCounts(row.getLong(0), row.getLong(1));
    });
  }

  /** Hub events not acknowledged yet (every subscriber). */
  public Future<Long> hubQueueDepth() {
    return pool.preparedQuery(HUB_QUEUE_DEPTH).execute().map(rows -> rows.iterator().next().getLong(0));
  }

  /** Items this server ({@code self}) owes, per sibling server of their owners (every sibling, 0 when none). */
  public Future<Map<String, Long>> syncLag(String self) {
    return pool.preparedQuery(SYNC_LAG).execute(Tuple.of(self)).map(OpsRepository::countsByServer);
  }

  /** {@code login}'s items owed per other current route (0 for a route with none). */
  public Future<Map<String, Long>> unsyncedOf(String login, String self) {
    return pool.preparedQuery(USER_LAG).execute(Tuple.of(login, self)).map(OpsRepository::countsByServer);
  }

  /** Up to {@code limit} delivery rows in {@code state}, oldest accepted first. */
  public Future<List<DeliveryRow>> deliveries(String state, int limit) {
    return pool.preparedQuery(DELIVERIES).execute(Tuple.of(state, limit)).map(rows -> {
      List<DeliveryRow> list = new ArrayList<>();
      for (Row row : rows) {
        list.add(new DeliveryRow(row.getString("base_key"), row.getLong("revision"), row.getString("owner"),
            row.getString("state"), row.getLong("accepted_at_ms"), row.getInteger("attempts"),
            row.getLong("next_attempt_at_ms"), row.getLong("updated_at_ms")));
      }
      return list;
    });
  }

  /** The URL a current route gives for {@code serverLogin}, if any route names it. */
  public Future<Optional<String>> routedUrlOf(String serverLogin) {
    return pool.preparedQuery(SERVER_URL).execute(Tuple.of(serverLogin))
        .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(rows.iterator().next().getString(0)));
  }

  private static Map<String, Long> countsByServer(Iterable<Row> rows) {
    Map<String, Long> counts = new LinkedHashMap<>();
    for (Row row : rows) {
      counts.put(row.getString(0), row.getLong(1));
    }
    return counts;
  }

  /** Row counts of {@code dm_delivery} in state accepted. */
  public record DeliveryCounts(long due, long accepted) {
  }

  /** One delivery row as the admin API shows it; {@code nextAttemptAtMs} is null for a terminal row. */
  public record DeliveryRow(String baseKey, long revision, String owner, String state, long acceptedAtMs,
      int attempts, Long nextAttemptAtMs, long updatedAtMs) {
  }
}
