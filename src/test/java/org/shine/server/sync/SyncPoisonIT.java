package org.shine.server.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClient.SignedPair;
import org.shine.server.client.ShineClientException;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.support.Eventually;
import org.shine.server.support.Sql;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;

/**
 * Attack 2 of issue 16, "sync poisoning": a user routed to [s1, s2] sends 25 tombstones of revision 1 created at
 * 2^52 ms to s1 while s2 is down. Before v3, s1 stored them (the clock bound skipped revision 1), s2 refused them in
 * every pull, never ACKed them, and ended each pull on their page, so none of the user's later messages reached s2.
 * Now s1 refuses them (PROTOCOL §5 v3), and when a hostile s1 serves them all the same (planted in its tables here
 * as such a sibling would serve them), s2 leaves them unACKed and walks past them (§8 v3): the later messages arrive.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class SyncPoisonIT {
  /** Pages of 10, so the 25 bad items fill the first pages of every pull. */
  private static final String CONFIG = "{\"delivery\":{\"scheduleMs\":[0,400,800,1200,1600],\"workerPeriodMs\":50,"
      + "\"callTimeoutMs\":1000,\"leaseMs\":3000},\"sync\":{\"periodMs\":200,\"pageSize\":10}}";
  private static final long FAR_FUTURE = 1L << 52;
  private static final int BAD = 25;
  private TestWorld world;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx).config(CONFIG);
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("25 tombstones of revision 1 created at 2^52 ms are refused by s1; served by s1 all the same, they"
      + " stay unACKed at s2 and alice's 5 later messages still reach s2")
  void futureTombstonesNeitherStoredNorBlocking() {
    TestServer[] servers = world.servers("s1", "s2");
    TestServer s1 = servers[0];
    TestUser alice = world.user("alice", s1, servers[1]);
    TestUser bob = world.user("bob", s1, servers[1]);
    servers[1].close();
    ShineClient session = world.session(alice, s1);
    String ref = "alice|bob|" + System.currentTimeMillis() + "|42|2";
    List<DmContainer> tombstones = new ArrayList<>();
    for (int i = 0; i < BAD; i++) {
      tombstones.add(DmCodec.sign(DmKind.TOMBSTONE, FAR_FUTURE, ShineClient.randomNonce(), 1, "alice", "bob", ref,
          new byte[0], alice.key().privateKey()));
    }

    // WHEN alice sends them to s1 while s2 is down: each is 400 CLOCK_SKEW, and s1 stores none
    for (DmContainer tombstone : tombstones) {
      assertThatThrownBy(() -> session.deleteMessage(tombstone).await())
          .isInstanceOfSatisfying(ShineClientException.class, e -> {
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.code()).isEqualTo(ErrorCode.CLOCK_SKEW);
          });
    }
    Sql sql1 = world.sql(s1);
    assertThat(sql1.count("SELECT count(*) FROM dm_signal")).isZero();
    assertThat(sql1.count("SELECT (SELECT count(*) FROM sync_outbox) + (SELECT count(*) FROM sync_queue)")).isZero();

    // AND s1 serves them all the same, ahead of 5 messages alice sends next
    for (DmContainer tombstone : tombstones) {
      plant(sql1, tombstone);
    }
    List<SignedPair> later = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      SignedPair pair = alice.pairTo(bob, "later " + i);
      session.sendPair(pair).await();
      later.add(pair);
    }

    // THEN once s2 is back, its pulls walk past the 25 and store the 5
    TestServer s2 = world.server("s2");
    Sql sql2 = world.sql(s2);
    Eventually.until("s2 holds alice's 5 later messages", 30_000,
        () -> sql2.count("SELECT count(*) FROM dm_message WHERE owner = 'alice'") == 5);
    for (SignedPair pair : later) {
      assertThat(sql2.count("SELECT count(*) FROM dm_message WHERE owner = 'alice' AND base_key = $1",
          pair.outgoing().baseKey())).isEqualTo(1);
    }
    // AND two more rounds later the 25 are still neither stored nor quarantined at s2, nor ACKed at s1
    world.awaitSyncRounds(s1, s2, 2);
    assertThat(sql2.count("SELECT count(*) FROM dm_signal")).isZero();
    assertThat(sql2.count("SELECT count(*) FROM sync_quarantine")).isZero();
    assertThat(sql1.count("SELECT count(*) FROM sync_outbox WHERE item_type = 4 AND NOT synced")).isEqualTo(BAD);
    assertThat(sql1.count("SELECT count(*) FROM dm_message m WHERE m.owner = 'alice' AND m.direction = 2"
        + " AND NOT EXISTS (SELECT 1 FROM sync_queue q WHERE q.owner = m.owner AND q.item_key = m.base_key)"))
        .as("alice's 5 pairs synced").isEqualTo(5);
  }

  /** Stores a tombstone for alice on s1 with its outbox item for s2, as the statement of a signal would. */
  private static void plant(Sql sql, DmContainer tombstone) {
    long now = System.currentTimeMillis();
    sql.rows("INSERT INTO dm_signal (owner, signal_key, kind, author, ref, created_at_ms, blob, stored_at_ms)"
            + " VALUES ($1, $2, 4, $1, $3, $4, $5, $6)", "alice", tombstone.messageKey(), tombstone.ref(),
        tombstone.createdAtMs(), io.vertx.core.buffer.Buffer.buffer(tombstone.bytes()), now);
    sql.rows("WITH item AS (INSERT INTO sync_outbox (owner, item_type, item_key, revision, synced, created_at_ms)"
        + " VALUES ($1, 4, $2, 0, false, $3) RETURNING sync_id, owner, item_type, item_key, created_at_ms)"
        + " INSERT INTO sync_queue (sibling, sync_id, owner, item_type, item_key, created_at_ms)"
        + " SELECT 's2', sync_id, owner, item_type, item_key, created_at_ms FROM item", "alice",
        tombstone.messageKey(), now);
  }
}
