package org.shine.server.adapter;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The adapter's local transactional inbox (seed 004): one row per event, unique on its {@code eventKey}, so a
 * redelivery after a crash between commit and ACK inserts nothing. Embedded SQLite by default, or any JDBC URL
 * (PostgreSQL included). Each caller thread gets its own connection; the schema is created on open.
 */
public final class Inbox {
  private static final String SCHEMA =
      "CREATE TABLE IF NOT EXISTS adapter_inbox ("
          + " event_key TEXT PRIMARY KEY, delivery_id TEXT NOT NULL, body TEXT NOT NULL,"
          + " status TEXT NOT NULL, attempts INTEGER NOT NULL, next_at_ms BIGINT NOT NULL,"
          + " lease_until_ms BIGINT NOT NULL, received_at_ms BIGINT NOT NULL, last_error TEXT)";
  private final String jdbcUrl;

  private Inbox(String jdbcUrl) {
    this.jdbcUrl = Objects.requireNonNull(jdbcUrl);
  }

  /** Opens (and creates) an inbox: a file path means SQLite, a {@code jdbc:} URL is used as given. */
  public static Inbox open(String pathOrUrl) throws SQLException {
    Inbox inbox = new Inbox(pathOrUrl.startsWith("jdbc:") ? pathOrUrl : "jdbc:sqlite:" + pathOrUrl);
    try (Connection connection = inbox.connect(); Statement statement = connection.createStatement()) {
      statement.execute(SCHEMA);
      statement.execute("CREATE INDEX IF NOT EXISTS adapter_inbox_ready ON adapter_inbox (status, next_at_ms)");
    }
    return inbox;
  }

  Connection connect() throws SQLException {
    Connection connection = DriverManager.getConnection(jdbcUrl);
    if (jdbcUrl.startsWith("jdbc:sqlite:")) {
      try (Statement statement = connection.createStatement()) {
        statement.execute("PRAGMA journal_mode=WAL");
        statement.execute("PRAGMA busy_timeout=10000");
      }
    }
    return connection;
  }

  /**
   * Phase 1, steps 5-7: one transaction that puts the event into the inbox as pending and commits. Answers false
   * when an event with that key is already there (a redelivery): nothing changes.
   */
  public boolean store(String eventKey, String deliveryId, String body, long nowMs) throws SQLException {
    try (Connection connection = connect()) {
      connection.setAutoCommit(false);
      try (PreparedStatement insert = connection.prepareStatement("INSERT INTO adapter_inbox (event_key,"
          + " delivery_id, body, status, attempts, next_at_ms, lease_until_ms, received_at_ms)"
          + " VALUES (?, ?, ?, 'pending', 0, ?, 0, ?) ON CONFLICT (event_key) DO NOTHING")) {
        insert.setString(1, eventKey);
        insert.setString(2, deliveryId);
        insert.setString(3, body);
        insert.setLong(4, nowMs);
        insert.setLong(5, nowMs);
        int inserted = insert.executeUpdate();
        connection.commit();
        return inserted == 1;
      } catch (SQLException e) {
        connection.rollback();
        throw e;
      }
    }
  }

  /**
   * Phase 2, step 1: claims up to {@code limit} ready rows (pending, delay passed, no live lease) by setting a
   * lease and counting the attempt, so a crash mid-handler never strands a row: its lease expires.
   */
  public List<Claimed> claimReady(long nowMs, long leaseMs, int limit) throws SQLException {
    List<Claimed> claimed = new ArrayList<>();
    try (Connection connection = connect()) {
      connection.setAutoCommit(false);
      try (PreparedStatement select = connection.prepareStatement("SELECT event_key, body, attempts FROM"
          + " adapter_inbox WHERE status = 'pending' AND next_at_ms <= ? AND lease_until_ms <= ?"
          + " ORDER BY received_at_ms, event_key LIMIT ?");
          PreparedStatement lease = connection.prepareStatement("UPDATE adapter_inbox SET lease_until_ms = ?,"
              + " attempts = attempts + 1 WHERE event_key = ? AND status = 'pending' AND lease_until_ms <= ?")) {
        select.setLong(1, nowMs);
        select.setLong(2, nowMs);
        select.setInt(3, limit);
        try (ResultSet rows = select.executeQuery()) {
          while (rows.next()) {
            lease.setLong(1, nowMs + leaseMs);
            lease.setString(2, rows.getString(1));
            lease.setLong(3, nowMs);
            if (lease.executeUpdate() == 1) {
              claimed.add(new Claimed(rows.getString(1), rows.getString(2), rows.getInt(3) + 1));
            }
          }
        }
        connection.commit();
      } catch (SQLException e) {
        connection.rollback();
        throw e;
      }
    }
    return claimed;
  }

  public void markDone(String eventKey) throws SQLException {
    update("UPDATE adapter_inbox SET status = 'done', lease_until_ms = 0 WHERE event_key = ?", eventKey);
  }

  /** Postpones a failed row to {@code nextAtMs}, or marks it dead when {@code nextAtMs} is negative. */
  public void markFailed(String eventKey, long nextAtMs, String error) throws SQLException {
    try (Connection connection = connect();
        PreparedStatement update = connection.prepareStatement("UPDATE adapter_inbox SET status = ?,"
            + " next_at_ms = ?, lease_until_ms = 0, last_error = ? WHERE event_key = ?")) {
      update.setString(1, nextAtMs < 0 ? "dead" : "pending");
      update.setLong(2, Math.max(nextAtMs, 0));
      update.setString(3, error);
      update.setString(4, eventKey);
      update.executeUpdate();
    }
  }

  /**
   * Marks a row whose container does not verify against its author's card (PROTOCOL §13) or whose encrypted body does
   * not open with the user's keys (§4 v3): final, never retried, never handed to the handler; {@code reason} says why.
   */
  public void markRejected(String eventKey, String reason) throws SQLException {
    try (Connection connection = connect();
        PreparedStatement update = connection.prepareStatement("UPDATE adapter_inbox SET status = 'rejected',"
            + " lease_until_ms = 0, last_error = ? WHERE event_key = ?")) {
      update.setString(1, reason);
      update.setString(2, eventKey);
      update.executeUpdate();
    }
  }

  /** Rows rejected because their container does not verify or their body does not open, with the reason. */
  public List<Row> rejected() throws SQLException {
    return rows("SELECT event_key, delivery_id, status, attempts, last_error FROM adapter_inbox"
        + " WHERE status = 'rejected' ORDER BY received_at_ms");
  }

  /** Rows that used up every delay. */
  public List<Row> dead() throws SQLException {
    return rows("SELECT event_key, delivery_id, status, attempts, last_error FROM adapter_inbox"
        + " WHERE status = 'dead' ORDER BY received_at_ms");
  }

  /** Puts every dead row back to pending with a fresh attempt count; answers how many. */
  public int retryDead(long nowMs) throws SQLException {
    try (Connection connection = connect();
        PreparedStatement update = connection.prepareStatement("UPDATE adapter_inbox SET status = 'pending',"
            + " attempts = 0, next_at_ms = ?, lease_until_ms = 0 WHERE status = 'dead'")) {
      update.setLong(1, nowMs);
      return update.executeUpdate();
    }
  }

  /** Counts by status (rejected: not verified), and the age of the oldest pending row (0 when none). */
  public Counts counts(long nowMs) throws SQLException {
    try (Connection connection = connect(); Statement statement = connection.createStatement();
        ResultSet rows = statement.executeQuery("SELECT"
            + " SUM(CASE WHEN status = 'done' THEN 1 ELSE 0 END),"
            + " SUM(CASE WHEN status = 'pending' AND attempts > 0 THEN 1 ELSE 0 END),"
            + " SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END),"
            + " SUM(CASE WHEN status = 'dead' THEN 1 ELSE 0 END),"
            + " SUM(CASE WHEN status = 'rejected' THEN 1 ELSE 0 END),"
            + " MIN(CASE WHEN status = 'pending' THEN received_at_ms END) FROM adapter_inbox")) {
      rows.next();
      long oldest = rows.getLong(6);
      long lag = rows.wasNull() ? 0 : nowMs - oldest;
      return new Counts(rows.getLong(1), rows.getLong(2), rows.getLong(3), rows.getLong(4), rows.getLong(5), lag);
    }
  }

  /** All rows, oldest first (for tests and inspection). */
  public List<Row> all() throws SQLException {
    return rows("SELECT event_key, delivery_id, status, attempts, last_error FROM adapter_inbox"
        + " ORDER BY received_at_ms, event_key");
  }

  private List<Row> rows(String sql) throws SQLException {
    List<Row> rows = new ArrayList<>();
    try (Connection connection = connect(); Statement statement = connection.createStatement();
        ResultSet result = statement.executeQuery(sql)) {
      while (result.next()) {
        rows.add(new Row(result.getString(1), result.getString(2), result.getString(3), result.getInt(4),
            result.getString(5)));
      }
    }
    return rows;
  }

  private void update(String sql, String eventKey) throws SQLException {
    try (Connection connection = connect(); PreparedStatement update = connection.prepareStatement(sql)) {
      update.setString(1, eventKey);
      update.executeUpdate();
    }
  }

  /** A row claimed for processing, with the attempt number this claim counted. */
  public record Claimed(String eventKey, String body, int attempt) {
  }

  /** A row as listed. */
  public record Row(String eventKey, String deliveryId, String status, int attempts, String lastError) {
  }

  /** Inbox totals. */
  public record Counts(long done, long retrying, long pending, long dead, long rejected, long oldestPendingAgeMs) {
  }
}
