package org.shine.server.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.support.TestDatabase;

/**
 * The hub part of the writing statements ({@link HubQueueSql}) on its own, against the real schema: per-user
 * delivery ids in statement order, entries only for subscribers, and a plan that stays keyed as tables grow.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class HubQueueSqlIT {
  /** The fragment behind a statement of its own whose input is three arrays, as the repositories pass them. */
  private static final String QUEUE =
      "WITH input AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY"
          + " AS t(login, event_key, body, ord))"
          + HubQueueSql.queue("SELECT login, event_key, body, ord FROM input WHERE body <> ''", "$4")
          + " SELECT count(*) FROM input";
  private static Vertx vertx;
  private static TestDatabase db;
  private static Pool sql;

  @BeforeAll
  static void schema() {
    vertx = Vertx.vertx();
    db = TestDatabase.create(vertx);
    Database.prepare(vertx, db.config()).await();
    sql = db.pool();
    // many subscribers and entries, so that a plan which scans would show it
    sql.query("INSERT INTO hub_subscriber (login, since_ms) SELECT 'u' || g, 0 FROM generate_series(1, 20000) g")
        .execute().await();
    sql.query("INSERT INTO hub_queue (login, delivery_id, event_key, body, created_at_ms)"
        + " SELECT 'u' || (g % 20000 + 1), g, 'old' || g, '{}', 0 FROM generate_series(1, 60000) g").execute().await();
    sql.query("UPDATE hub_subscriber SET last_delivery_id = 60000").execute().await();
    sql.query("ANALYZE").execute().await();
  }

  @AfterAll
  static void drop() {
    sql.close().await();
    db.close();
    vertx.close().await();
  }

  @Test
  @DisplayName("entries of one statement get each subscriber's next ids in statement order; others get none")
  void perUserIdsInOrder() {
    queue(List.of("u5", "nobody", "u7", "u5", "u7"), List.of("a", "b", "c", "d", ""), 1);

    assertThat(entries("u5")).containsExactly("60001:a", "60002:d");
    assertThat(entries("u7")).containsExactly("60001:c");
    assertThat(entries("nobody")).isEmpty();
    assertThat(lastId("u5")).isEqualTo(60002);
    assertThat(lastId("u7")).isEqualTo(60001);
  }

  @Test
  @DisplayName("an event key already queued is left as it is, and the next entry still gets a greater id")
  void repeatedKeyLeftAlone() {
    queue(List.of("u9"), List.of("e1"), 1);
    queue(List.of("u9", "u9"), List.of("e1", "e2"), 2);

    List<String> got = entries("u9");
    assertThat(got).hasSize(2);
    assertThat(got.get(0)).startsWith("60001:");
    assertThat(Long.parseLong(got.get(1).split(":")[0])).isGreaterThan(60001);
  }

  @Test
  @DisplayName("as a cached generic plan it probes keys only: no scan of the subscribers or the queue")
  void genericPlanStaysKeyed() {
    List<String> plan = new ArrayList<>();
    SqlConnection connection = sql.getConnection().await();
    try {
      connection.query("SET plan_cache_mode = force_generic_plan").execute().await();
      for (Row row : connection.preparedQuery("EXPLAIN " + QUEUE).execute(params(List.of("u1", "u2"),
          List.of("x", ""), 1)).await()) {
        plan.add(row.getString(0));
      }
    } finally {
      connection.close().await();
    }

    assertThat(String.join("\n", plan)).contains("hub_subscriber_pkey")
        .doesNotContain("Seq Scan on hub_subscriber").doesNotContain("Seq Scan on hub_queue");
  }

  /** Queues one entry per login, keyed {@code <key>} with body {@code <key>} ("" for none). */
  private static void queue(List<String> logins, List<String> keys, long nowMs) {
    sql.preparedQuery(QUEUE).execute(params(logins, keys, nowMs)).await();
  }

  private static Tuple params(List<String> logins, List<String> keys, long nowMs) {
    return Tuple.of(logins.toArray(String[]::new), keys.toArray(String[]::new), keys.toArray(String[]::new), nowMs);
  }

  private static List<String> entries(String login) {
    List<String> entries = new ArrayList<>();
    sql.preparedQuery("SELECT delivery_id, event_key FROM hub_queue WHERE login = $1 AND created_at_ms > 0"
        + " ORDER BY delivery_id").execute(Tuple.of(login)).await()
        .forEach(row -> entries.add(row.getLong(0) + ":" + row.getString(1)));
    return entries;
  }

  private static long lastId(String login) {
    return sql.preparedQuery("SELECT last_delivery_id FROM hub_subscriber WHERE login = $1")
        .execute(Tuple.of(login)).await().iterator().next().getLong(0);
  }
}
