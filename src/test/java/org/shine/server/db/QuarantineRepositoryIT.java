package org.shine.server.db;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.db.QuarantineRepository.Entry;
import org.shine.server.support.Opened;
import org.shine.server.support.TestDatabase;

/** The sync quarantine's table (PROTOCOL §8 v3): its bound per owner, one row per source item, bounded reads. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class QuarantineRepositoryIT {
  private final Opened opened = new Opened();
  private Pool pool;

  @BeforeEach
  void open(Vertx vertx) {
    TestDatabase db = opened.keep(TestDatabase.create(vertx));
    Database.prepare(vertx, db.config()).await();
    pool = opened.pool(db);
  }

  @AfterEach
  void close() {
    opened.closeAll();
  }

  @Test
  @DisplayName("at most 1,000 items per owner: the 1,001st to 1,005th drop that owner's oldest, other owners keep"
      + " theirs, and written together they still end at the bound")
  void boundPerOwner() {
    QuarantineRepository repository = new QuarantineRepository(pool);
    repository.put(entry("bob", 1)).await();
    // the first ten one after the other (so which five are the oldest is known), then ten at a time, as the items
    // of a page are written
    for (int id = 1; id <= 10; id++) {
      repository.put(entry("alice", 1000 + id)).await();
    }
    for (int first = 11; first <= QuarantineRepository.PER_OWNER + 5; first += 10) {
      List<Future<Boolean>> batch = new ArrayList<>();
      for (int id = first; id < first + 10 && id <= QuarantineRepository.PER_OWNER + 5; id++) {
        batch.add(repository.put(entry("alice", 1000 + id)));
      }
      Future.all(new ArrayList<>(batch)).await();
    }

    assertThat(repository.countOf("alice").await()).isEqualTo(QuarantineRepository.PER_OWNER);
    List<Entry> oldest = repository.list("alice", 0, 1).await();
    assertThat(oldest.get(0).sourceSyncId()).isEqualTo(1006);
    assertThat(repository.countOf("bob").await()).isEqualTo(1);
  }

  @Test
  @DisplayName("an item that comes again updates its row (reason, detail) instead of adding one, and is not new")
  void oneRowPerSourceItem() {
    QuarantineRepository repository = new QuarantineRepository(pool);

    assertThat(repository.put(entry("alice", 7)).await()).isTrue();
    Entry again = new Entry(0, "alice", "carol", "s2", "ws://127.0.0.1:1/ws", "DmSyncBatch", "pair", 7,
        "bad_signature", "still bad", "{}", false, 5, 5);
    assertThat(repository.put(again).await()).isFalse();

    List<Entry> rows = repository.list(null, 0, 10).await();
    assertThat(rows).hasSize(1);
    assertThat(rows.get(0).reason()).isEqualTo("bad_signature");
    assertThat(rows.get(0).detail()).isEqualTo("still bad");
    assertThat(rows.get(0).receivedAtMs()).as("first received").isEqualTo(1);
  }

  @Test
  @DisplayName("the items of a login as owner or author come oldest first, bounded, truncated ones left out")
  void ownerOrAuthor() {
    QuarantineRepository repository = new QuarantineRepository(pool);
    repository.put(entry("alice", 1)).await();
    repository.put(new Entry(0, "dave", "alice", "s2", "ws://127.0.0.1:1/ws", "DmSyncBatch", "incoming", 2,
        "malformed", "x", "{}", false, 1, 1)).await();
    repository.put(new Entry(0, "alice", null, "s2", "ws://127.0.0.1:1/ws", "DmSyncBatch", "pair", 3,
        "malformed", "x", "{\"cut", true, 1, 1)).await();
    repository.put(entry("erin", 4)).await();

    assertThat(repository.ofOwnerOrAuthor("alice", 10).await()).extracting(Entry::sourceSyncId)
        .containsExactly(1L, 2L);
    assertThat(repository.ofOwnerOrAuthor("alice", 1).await()).extracting(Entry::sourceSyncId).containsExactly(1L);
  }

  private static Entry entry(String owner, long syncId) {
    return new Entry(0, owner, "carol", "s2", "ws://127.0.0.1:1/ws", "DmSyncBatch", "pair", syncId, "malformed",
        "bad shape", "{\"syncId\":" + syncId + "}", false, 1, 1);
  }
}
