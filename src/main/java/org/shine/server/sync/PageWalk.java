package org.shine.server.sync;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.shine.server.config.AppConfig;
import org.shine.server.dm.Logins;
import org.shine.server.peer.PeerCalls;
import org.shine.server.protocol.Ops;
import org.shine.server.util.Json;

/**
 * One op's pages from one sibling in one pull run (PROTOCOL §8 v3): the first page from the start, each next one
 * after the highest syncId of the page before ({@code afterSyncId}) and carrying the ACKs of what that page stored
 * or quarantined, so items left unACKed never hold back the ones after them; the last page's ACKs travel alone. The
 * walk ends when the sibling has no more, when a page does not move past the one before (a sibling that ignores
 * {@code afterSyncId} or serves nothing new), or after {@code sync.maxPagesPerRun} pages (a sibling answering
 * {@code hasMore} forever cannot hold the run). An item is taken only when it has a syncId and its owner is routed
 * to both servers; any other is left unACKed.
 */
final class PageWalk {
  private final AppConfig config;
  private final PeerCalls peers;
  private final SharedOwners owners;

  PageWalk(AppConfig config, PeerCalls peers, SharedOwners owners) {
    this.config = Objects.requireNonNull(config);
    this.peers = Objects.requireNonNull(peers);
    this.owners = Objects.requireNonNull(owners);
  }

  /** Applies one item of a page: what became of it. */
  @FunctionalInterface
  interface ItemHandler {
    Future<ItemResult> apply(PullRun run, PulledItem item);
  }

  /** Walks {@code op}'s pages for {@code run}'s sibling, handing each item to {@code handler}. */
  Future<Tally> walk(PullRun run, String op, ItemHandler handler) {
    return page(run, op, handler, List.of(), 0, Tally.NONE);
  }

  private Future<Tally> page(PullRun run, String op, ItemHandler handler, List<Long> acks, long afterSyncId,
      Tally tally) {
    return peers.callInSession(run.sibling().url(), op, request(run, acks, afterSyncId, config.sync().pageSize()))
        .compose(page -> {
          List<Future<ItemResult>> taken = new ArrayList<>();
          long highest = afterSyncId;
          for (JsonNode item : page.path("items")) {
            long syncId = syncIdOf(item);
            highest = Math.max(highest, syncId);
            taken.add(take(run, op, item, syncId, handler));
          }
          long after = highest;
          return Future.all(new ArrayList<>(taken)).compose(done -> {
            List<Long> ackNext = new ArrayList<>();
            List<ItemResult> results = new ArrayList<>();
            for (Future<ItemResult> result : taken) {
              results.add(result.result());
              if (result.result().acked()) {
                ackNext.add(result.result().syncId());
              }
            }
            Tally next = tally.plus(results);
            boolean more = page.path("hasMore").asBoolean(false) && after > afterSyncId
                && next.pages() < config.sync().maxPagesPerRun();
            if (more) {
              return page(run, op, handler, ackNext, after, next);
            }
            return ackNext.isEmpty() ? Future.succeededFuture(next)
                : peers.callInSession(run.sibling().url(), op, request(run, ackNext, after, 0)).map(v -> next);
          });
        });
  }

  /** Hands an item with a syncId and an owner of both servers to the handler; leaves any other unACKed. */
  private Future<ItemResult> take(PullRun run, String op, JsonNode item, long syncId, ItemHandler handler) {
    String owner = item.path("owner").isTextual() ? item.get("owner").asText() : null;
    if (syncId == ItemResult.NO_SYNC_ID || owner == null || !Logins.isValid(owner)) {
      return Future.succeededFuture(ItemResult.left(syncId));
    }
    String type = op.equals(Ops.USER_SETTINGS_SYNC_BATCH) ? "setting" : item.path("type").asText("?");
    PulledItem pulled = new PulledItem(run.sibling(), op, syncId, owner, type, item);
    return run.sharedOwner(owner, o -> owners.shared(o, run.sibling()))
        .compose(shared -> shared ? handler.apply(run, pulled) : Future.succeededFuture(ItemResult.left(syncId)))
        // whatever else fails (this server's storage) leaves the item for the next run
        .otherwise(ItemResult.left(syncId));
  }

  private static long syncIdOf(JsonNode item) {
    JsonNode syncId = item.path("syncId");
    return syncId.isIntegralNumber() && syncId.canConvertToLong() && syncId.asLong() >= 0 ? syncId.asLong()
        : ItemResult.NO_SYNC_ID;
  }

  /**
   * A page request: the ACKs, the page size (0: ACKs only) and {@code afterSyncId}, which a sibling configured as
   * an older peer ({@code protocol} v1 or v2) is not sent (it would refuse the unknown field).
   */
  private ObjectNode request(PullRun run, List<Long> acks, long afterSyncId, int limit) {
    ObjectNode payload = Json.MAPPER.createObjectNode().put("sourceServerLogin", config.serverLogin());
    ArrayNode ids = payload.putArray("ackSyncIds");
    acks.forEach(ids::add);
    payload.put("limit", limit);
    boolean olderPeer = config.peer(run.sibling().serverLogin())
        .map(peer -> peer.protocol() != AppConfig.PeerProtocol.V3).orElse(false);
    if (afterSyncId > 0 && !olderPeer) {
      payload.put("afterSyncId", afterSyncId);
    }
    return payload;
  }

  /** Counts of one op's pages in one run: pages taken, and the items by fate. */
  record Tally(int pages, int stored, int dropped, int quarantined, int left) {
    static final Tally NONE = new Tally(0, 0, 0, 0, 0);

    /** One more page, with these results. */
    Tally plus(List<ItemResult> results) {
      int[] byFate = new int[ItemResult.Fate.values().length];
      results.forEach(result -> byFate[result.fate().ordinal()]++);
      return new Tally(pages + 1, stored + byFate[ItemResult.Fate.STORED.ordinal()],
          dropped + byFate[ItemResult.Fate.DROPPED.ordinal()],
          quarantined + byFate[ItemResult.Fate.QUARANTINED.ordinal()],
          left + byFate[ItemResult.Fate.LEFT.ordinal()]);
    }
  }
}
