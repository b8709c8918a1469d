package org.shine.server.db;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.Objects;

/**
 * SQL of invite codes ({@code invite}, PROTOCOL §13 {@code directory.registration} "invite"): only the hash of a code
 * is stored; a code is used once, inside the transaction of the card it admits (so a refused card leaves it unused).
 */
public final class InviteRepository {
  /** An invite row stays this long after it expired (used or not), then the next new invite prunes it. */
  public static final long RETAIN_AFTER_EXPIRY_MS = 30L * 24 * 3600 * 1000;
  private static final String INSERT =
      "INSERT INTO invite (code_hash, created_at_ms, expires_at_ms) VALUES ($1, $2, $3)";
  private static final String PRUNE = "DELETE FROM invite WHERE expires_at_ms < $1";
  private static final String USE =
      "UPDATE invite SET used_at_ms = $2, used_by = $3 WHERE code_hash = $1 AND used_at_ms IS NULL"
          + " AND expires_at_ms > $2 RETURNING 1";

  private final Pool pool;

  public InviteRepository(Pool pool) {
    this.pool = Objects.requireNonNull(pool);
  }

  /** Stores a new code's hash, valid until {@code expiresAtMs}; prunes rows long expired. */
  public Future<Void> create(byte[] codeHash, long nowMs, long expiresAtMs) {
    return pool.withTransaction(conn -> conn.preparedQuery(PRUNE).execute(Tuple.of(nowMs - RETAIN_AFTER_EXPIRY_MS))
        .compose(v -> conn.preparedQuery(INSERT).execute(Tuple.of(Buffer.buffer(codeHash), nowMs, expiresAtMs))))
        .mapEmpty();
  }

  /**
   * Uses the code of {@code codeHash} for {@code login} inside {@code conn}'s transaction; false when no such code is
   * unused and unexpired at {@code nowMs}. Two transactions using one code: the second waits for the first's row
   * lock and then finds it used.
   */
  public Future<Boolean> use(SqlConnection conn, byte[] codeHash, String login, long nowMs) {
    return conn.preparedQuery(USE).execute(Tuple.of(Buffer.buffer(codeHash), nowMs, login))
        .map(rows -> rows.rowCount() == 1);
  }
}
