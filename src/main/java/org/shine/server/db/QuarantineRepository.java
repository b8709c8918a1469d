package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * SQL of the sync quarantine ({@code sync_quarantine}, PROTOCOL §8 v3): items pulled from a sibling that were
 * ACKed but not stored, at most {@code perOwner} per owner (writing one more drops that owner's oldest), one row per
 * item of a source (an item that comes again updates its row). Every read is bounded by its limit and walks an index.
 */
public final class QuarantineRepository {
  /** The bound of PROTOCOL §8 v3: at most this many items of one owner are kept. */
  public static final int PER_OWNER = 1_000;
  private static final String COLUMNS = "id, owner, author, source_server, source_url, op, item_type, source_sync_id,"
      + " reason, detail, item_json, truncated, received_at_ms, checked_at_ms";
  /* one owner's writes take turns, so concurrent items of a page cannot pass the bound together */
  private static final String LOCK_OWNER = "SELECT pg_advisory_xact_lock(hashtext('sync_quarantine:' || $1))";
  private static final String PUT =
      "INSERT INTO sync_quarantine (owner, author, source_server, source_url, op, item_type, source_sync_id, reason,"
          + " detail, item_json, truncated, received_at_ms, checked_at_ms)"
          + " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)"
          + " ON CONFLICT (source_server, op, source_sync_id) DO UPDATE SET owner = EXCLUDED.owner,"
          + " author = EXCLUDED.author, source_url = EXCLUDED.source_url, item_type = EXCLUDED.item_type,"
          + " reason = EXCLUDED.reason, detail = EXCLUDED.detail, item_json = EXCLUDED.item_json,"
          + " truncated = EXCLUDED.truncated, checked_at_ms = EXCLUDED.checked_at_ms"
          + " RETURNING (xmax = 0) AS inserted";
  /* $2: the bound less one, the offset of the oldest row kept */
  private static final String TRIM =
      "DELETE FROM sync_quarantine WHERE owner = $1 AND id < (SELECT id FROM sync_quarantine WHERE owner = $1"
          + " ORDER BY id DESC OFFSET $2 LIMIT 1)";
  private static final String ALL = "SELECT " + COLUMNS + " FROM sync_quarantine WHERE id > $1 ORDER BY id LIMIT $2";
  private static final String OF_OWNER =
      "SELECT " + COLUMNS + " FROM sync_quarantine WHERE owner = $1 AND id > $2 ORDER BY id LIMIT $3";
  /* each branch walks its own index and is bounded before the two are merged */
  private static final String OF_OWNER_OR_AUTHOR =
      "SELECT " + COLUMNS + " FROM sync_quarantine WHERE id IN ("
          + "(SELECT id FROM sync_quarantine WHERE owner = $1 AND NOT truncated ORDER BY id LIMIT $2) UNION"
          + " (SELECT id FROM sync_quarantine WHERE author = $1 AND NOT truncated ORDER BY id LIMIT $2))"
          + " ORDER BY id LIMIT $2";
  private static final String REMOVE = "DELETE FROM sync_quarantine WHERE id = $1";
  private static final String CHECKED =
      "UPDATE sync_quarantine SET reason = $2, detail = $3, checked_at_ms = $4 WHERE id = $1";
  private static final String COUNT_OF_OWNER = "SELECT count(*) FROM sync_quarantine WHERE owner = $1";

  private final Pool pool;
  private final int perOwner;

  /** With the bound of PROTOCOL §8 v3 ({@value #PER_OWNER} per owner). */
  public QuarantineRepository(Pool pool) {
    this(pool, PER_OWNER);
  }

  /** {@code perOwner}: the most items one owner may have in quarantine. */
  public QuarantineRepository(Pool pool, int perOwner) {
    this.pool = Objects.requireNonNull(pool);
    if (perOwner < 1) {
      throw new IllegalArgumentException("perOwner must be at least 1");
    }
    this.perOwner = perOwner;
  }

  /**
   * Quarantines {@code entry} (its id and check time are ignored), or updates the row of the same source item;
   * then drops the owner's oldest beyond the bound. Answers whether a row was added.
   */
  public Future<Boolean> put(Entry entry) {
    return pool.withTransaction(conn -> conn.preparedQuery(LOCK_OWNER).execute(Tuple.of(entry.owner()))
        .compose(v -> conn.preparedQuery(PUT).execute(Tuple.from(new Object[] {entry.owner(), entry.author(),
            entry.sourceServer(), entry.sourceUrl(), entry.op(), entry.itemType(), entry.sourceSyncId(),
            entry.reason(), entry.detail(), entry.itemJson(), entry.truncated(), entry.receivedAtMs()})))
        .compose(rows -> {
          boolean inserted = rows.iterator().next().getBoolean("inserted");
          return conn.preparedQuery(TRIM).execute(Tuple.of(entry.owner(), (long) perOwner - 1)).map(v -> inserted);
        }));
  }

  /** Oldest first, after {@code afterId}: every owner's, or {@code owner}'s only when not null. */
  public Future<List<Entry>> list(String owner, long afterId, int limit) {
    Future<RowSet<Row>> rows = owner == null ? pool.preparedQuery(ALL).execute(Tuple.of(afterId, limit))
        : pool.preparedQuery(OF_OWNER).execute(Tuple.of(owner, afterId, limit));
    return rows.map(QuarantineRepository::entries);
  }

  /** The oldest complete (not truncated) items whose owner or author is {@code login}, at most {@code limit}. */
  public Future<List<Entry>> ofOwnerOrAuthor(String login, int limit) {
    return pool.preparedQuery(OF_OWNER_OR_AUTHOR).execute(Tuple.of(login, limit))
        .map(QuarantineRepository::entries);
  }

  /** Items of {@code owner} in quarantine. */
  public Future<Long> countOf(String owner) {
    return pool.preparedQuery(COUNT_OF_OWNER).execute(Tuple.of(owner)).map(rows -> rows.iterator().next().getLong(0));
  }

  /** An item that now stored leaves the quarantine. */
  public Future<Void> remove(long id) {
    return pool.preparedQuery(REMOVE).execute(Tuple.of(id)).mapEmpty();
  }

  /** An item checked again that still cannot be stored: why, as of {@code nowMs}. */
  public Future<Void> checkedAgain(long id, String reason, String detail, long nowMs) {
    return pool.preparedQuery(CHECKED).execute(Tuple.of(id, reason, detail, nowMs)).mapEmpty();
  }

  private static List<Entry> entries(RowSet<Row> rows) {
    List<Entry> entries = new ArrayList<>(rows.size());
    for (Row row : rows) {
      entries.add(new Entry(row.getLong("id"), row.getString("owner"), row.getString("author"),
          row.getString("source_server"), row.getString("source_url"), row.getString("op"),
          row.getString("item_type"), row.getLong("source_sync_id"), row.getString("reason"),
          row.getString("detail"), row.getString("item_json"), row.getBoolean("truncated"),
          row.getLong("received_at_ms"), row.getLong("checked_at_ms")));
    }
    return entries;
  }

  /**
   * One quarantined item: its owner, its author when its containers parsed, the sibling it came from (serverLogin and
   * URL), the sync op and item type, the source's syncId, the reason code and the failure's text, the item as
   * received (JSON, cut short when {@code truncated}), when it was first received and last checked.
   */
  public record Entry(long id, String owner, String author, String sourceServer, String sourceUrl, String op,
      String itemType, long sourceSyncId, String reason, String detail, String itemJson, boolean truncated,
      long receivedAtMs, long checkedAtMs) {
    public Entry {
      Objects.requireNonNull(owner);
      Objects.requireNonNull(sourceServer);
      Objects.requireNonNull(sourceUrl);
      Objects.requireNonNull(op);
      Objects.requireNonNull(itemType);
      Objects.requireNonNull(reason);
      Objects.requireNonNull(detail);
      Objects.requireNonNull(itemJson);
    }
  }
}
