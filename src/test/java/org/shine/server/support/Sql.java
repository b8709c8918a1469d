package org.shine.server.support;

import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.util.Objects;
import org.shine.server.client.ShineClient.SignedPair;

/** Assertions' reads of one server's database, in SQL with {@code $n} parameters. */
public final class Sql {
  private final Pool pool;

  public Sql(Pool pool) {
    this.pool = Objects.requireNonNull(pool);
  }

  public Pool pool() {
    return pool;
  }

  /** The single {@code bigint} a {@code SELECT count(*) ...} answers. */
  public long count(String query, Object... params) {
    return rows(query, params).iterator().next().getLong(0);
  }

  public RowSet<Row> rows(String query, Object... params) {
    return pool.preparedQuery(query).execute(Tuple.from(params)).await();
  }

  /** The delivery state of the pair's revision 0 here, null when this server has no delivery row for it. */
  public String state(SignedPair pair) {
    return state(pair.outgoing().baseKey());
  }

  public String state(String baseKey) {
    Row row = delivery(baseKey);
    return row == null ? null : row.getString("state");
  }

  /** The attempts counted for the pair's revision 0 here, -1 when this server has no delivery row for it. */
  public int attempts(SignedPair pair) {
    return attempts(pair.outgoing().baseKey());
  }

  public int attempts(String baseKey) {
    Row row = delivery(baseKey);
    return row == null ? -1 : row.getInteger("attempts");
  }

  private Row delivery(String baseKey) {
    RowSet<Row> rows = rows("SELECT state, attempts FROM dm_delivery WHERE base_key = $1 AND revision = 0", baseKey);
    return rows.size() == 0 ? null : rows.iterator().next();
  }
}
