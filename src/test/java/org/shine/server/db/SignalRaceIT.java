package org.shine.server.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import io.vertx.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.db.SignalRepository.Signal;
import org.shine.server.model.HistoryEntry;
import org.shine.server.model.HistoryQuery;
import org.shine.server.support.Opened;
import org.shine.server.support.TestDatabase;

/**
 * A receipt or tombstone and the copy it refers to are stored by separate statements (the copy comes by forward or
 * sync, the signal from the reader's server): whichever order their transactions commit in, the owner sees the
 * copy read or deleted. Forced here deterministically: the copy's insert is held uncommitted while the signal is
 * stored, so neither statement can see the other's row.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
class SignalRaceIT {
  private static final String INSERT_COPY = "INSERT INTO dm_message (owner, base_key, direction, peer, created_at_ms,"
      + " revision, blob, pair_blob, stored_at_ms) VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $5)";

  private final Opened opened = new Opened();

  @AfterEach
  void close() {
    opened.closeAll();
  }

  @Test
  @DisplayName("a receipt or tombstone committed while its copy's insert is still open is not lost")
  void signalDuringCopyInsert(Vertx vertx) {
    TestDatabase db = opened.keep(TestDatabase.create(vertx));
    Database.prepare(vertx, db.config()).await();
    Pool pool = opened.pool(db);
    SignalRepository signals = new SignalRepository(pool, "s1");
    DmRepository copies = new DmRepository(pool, "s1");
    long now = System.currentTimeMillis();
    String received = "bob|alice|" + now + "|1";
    String sent = "alice|bob|" + now + "|2";

    // GIVEN alice's copies of a received and a sent message are being inserted, not yet committed
    SqlConnection connection = pool.getConnection().await();
    Transaction tx = connection.begin().await();
    connection.preparedQuery(INSERT_COPY).execute(Tuple.of("alice", received, (short) 1, "bob", now,
        blob("hi"), null)).await();
    connection.preparedQuery(INSERT_COPY).execute(Tuple.of("alice", sent, (short) 2, "bob", now + 1,
        blob("hello"), blob("hello, incoming"))).await();

    // WHEN alice's receipt for the first and her tombstone of the second are stored and committed meanwhile
    assertThat(signals.store("alice", new Signal(received + "|3", 3, "alice", received, now + 5, bytes("r")),
        false, null, 0, now + 5, null).await()).isTrue();
    assertThat(signals.store("alice", new Signal(sent + "|4", 4, "alice", sent + "|2", now + 6, bytes("t")),
        false, null, 0, now + 6, null).await()).isTrue();
    tx.commit().await();
    connection.close().await();

    // THEN her history shows the first read and the second deleted
    List<HistoryEntry> history = copies.history(new HistoryQuery("alice", "bob", Long.MAX_VALUE, 10)).await();
    assertThat(history).hasSize(2);
    HistoryEntry sentEntry = history.get(0);
    HistoryEntry receivedEntry = history.get(1);
    assertThat(sentEntry.baseKey()).isEqualTo(sent);
    assertThat(sentEntry.deleted()).as("tombstone applies").isTrue();
    assertThat(sentEntry.read()).isFalse();
    assertThat(receivedEntry.baseKey()).isEqualTo(received);
    assertThat(receivedEntry.read()).as("receipt applies").isTrue();
    assertThat(receivedEntry.deleted()).isFalse();
  }

  private static Buffer blob(String text) {
    return Buffer.buffer(bytes(text));
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
