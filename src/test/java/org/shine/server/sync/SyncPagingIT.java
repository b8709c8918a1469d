package org.shine.server.sync;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.client.ShineClient;
import org.shine.server.support.Eventually;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestUser;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;

/**
 * Pages of a pull run (PROTOCOL §8 v3): the source hands out the items after {@code afterSyncId}, so a page after an
 * unACKed item holds the next ones; the puller ends a run after {@code sync.maxPagesPerRun} pages of each op however
 * long a sibling answers {@code hasMore}.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class SyncPagingIT {
  private TestWorld world;

  @BeforeEach
  void open(Vertx vertx) {
    world = TestWorld.on(vertx).config("{\"sync\":{\"periodMs\":200,\"pageSize\":4,\"maxPagesPerRun\":3}}");
  }

  @AfterEach
  void close() {
    world.close();
  }

  @Test
  @DisplayName("the source serves the page after afterSyncId while the items before it stay unACKed, and from the"
      + " start again without it; settings pages too")
  void pageAfterAnUnackedItem(Vertx vertx) {
    TestServer s1 = world.server("s1");
    StubPeer sibling = world.stub();
    TestUser alice = world.user("alice", List.of(Map.entry("s1", s1.url()),
        Map.entry(sibling.serverLogin(), sibling.url())), s1);
    TestUser bob = world.user("bob", s1);
    ShineClient session = world.session(alice, s1);
    for (int i = 0; i < 5; i++) {
      session.sendPair(alice.pairTo(bob, "item " + i)).await();
      session.request("SetUserSetting", ShineClient.object().put("key", "k" + i).put("value", i)).await();
    }
    ShineClient asSibling = world.keep(sibling.sessionOn(vertx, s1.url()));

    for (String op : List.of("DmSyncBatch", "UserSettingsSyncBatch")) {
      // WHEN the sibling takes two items, ACKs none, and asks for the page after them
      JsonNode first = batch(asSibling, op, sibling.serverLogin(), List.of(), 2, 0);
      List<Long> firstIds = ids(first);
      JsonNode after = batch(asSibling, op, sibling.serverLogin(), List.of(), 2, firstIds.get(1));
      JsonNode last = batch(asSibling, op, sibling.serverLogin(), List.of(), 2, ids(after).get(1));
      JsonNode fromStart = batch(asSibling, op, sibling.serverLogin(), List.of(), 2, 0);

      // THEN it gets the next two, then the fifth, and from the start the first two again (never ACKed)
      assertThat(firstIds).as(op).hasSize(2);
      assertThat(ids(after)).as(op).hasSize(2).allSatisfy(id -> assertThat(id).isGreaterThan(firstIds.get(1)));
      assertThat(after.get("hasMore").asBoolean()).as(op).isTrue();
      assertThat(ids(last)).as(op).hasSize(1);
      assertThat(last.get("hasMore").asBoolean()).as(op).isFalse();
      assertThat(ids(fromStart)).as(op).isEqualTo(firstIds);
    }
  }

  @Test
  @DisplayName("a sibling answering hasMore forever gets exactly sync.maxPagesPerRun page requests per run of each"
      + " op, the settings walk ends so the DM walk runs, and every run starts again from the start")
  void runEndsAfterMaxPages() {
    StubPeer sibling = world.stub();
    List<JsonNode> settingsPages = pagesForever(sibling, "UserSettingsSyncBatch");
    List<JsonNode> dmPages = pagesForever(sibling, "DmSyncBatch");
    TestServer s2 = world.server("s2");
    world.user("alice", List.of(Map.entry(sibling.serverLogin(), sibling.url()), Map.entry("s2", s2.url())), s2);

    Eventually.until("three whole runs of DM pages", 30_000, () -> runs(dmPages).size() >= 4);

    for (List<JsonNode> pages : List.of(settingsPages, dmPages)) {
      List<List<JsonNode>> runs = runs(pages);
      // the last run may still be under way
      for (List<JsonNode> run : runs.subList(0, runs.size() - 1)) {
        assertThat(run).hasSize(3);
        assertThat(run.get(0).has("afterSyncId")).isFalse();
        assertThat(run.get(1).get("afterSyncId").asLong()).isLessThan(run.get(2).get("afterSyncId").asLong());
      }
    }
  }

  /**
   * The stub answers every page of {@code op} with two items of a user it does not share with the puller (left
   * unACKed) and {@code hasMore}; answers the page requests it got (limit above 0), in order.
   */
  private static List<JsonNode> pagesForever(StubPeer sibling, String op) {
    List<JsonNode> pages = new java.util.concurrent.CopyOnWriteArrayList<>();
    AtomicLong syncIds = new AtomicLong();
    sibling.respond(op, (o, payload) -> {
      ObjectNode page = Json.MAPPER.createObjectNode();
      ArrayNode items = page.putArray("items");
      if (payload.path("limit").asInt() > 0) {
        pages.add(payload);
        for (int i = 0; i < 2; i++) {
          items.addObject().put("syncId", syncIds.incrementAndGet()).put("owner", "nobody").put("type", "pair")
              .put("key", "k").put("updatedAtMs", 1).put("value", 1).putArray("blobsB64");
        }
      }
      return page.put("hasMore", true);
    });
    return pages;
  }

  /** Page requests split into runs: a run starts with a request without afterSyncId. */
  private static List<List<JsonNode>> runs(List<JsonNode> pages) {
    List<List<JsonNode>> runs = new ArrayList<>();
    for (JsonNode page : List.copyOf(pages)) {
      if (!page.has("afterSyncId") || runs.isEmpty()) {
        runs.add(new ArrayList<>());
      }
      runs.get(runs.size() - 1).add(page);
    }
    return runs;
  }

  private static JsonNode batch(ShineClient client, String op, String puller, List<Long> acks, int limit,
      long afterSyncId) {
    ObjectNode payload = ShineClient.object().put("sourceServerLogin", puller).put("limit", limit);
    if (afterSyncId > 0) {
      payload.put("afterSyncId", afterSyncId);
    }
    ArrayNode ids = payload.putArray("ackSyncIds");
    acks.forEach(ids::add);
    return client.request(op, payload).await();
  }

  private static List<Long> ids(JsonNode page) {
    List<Long> ids = new ArrayList<>();
    page.get("items").forEach(item -> ids.add(item.get("syncId").asLong()));
    return ids;
  }
}
