package org.shine.server.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.db.SyncRepository;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Fields;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.Ops;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.sync.DmSyncPage;
import org.shine.server.sync.SettingsSyncPage;
import org.shine.server.sync.SyncBatchRequest;

/**
 * The two-server sync at the gateway (PROTOCOL §6a, §8): a sibling's DmSyncBatch and UserSettingsSyncBatch pages
 * (after its {@code afterSyncId}) with their ACKs, on its server session only, and a user's
 * MarkAllUserSettingsUnsynced (a full re-sync, limited per user by the sync verticle).
 */
final class SyncHandler {
  private static final int MAX_ACKS = 10_000;
  private static final int MAX_SYNC_PAGE = 1_000;
  private final EventBus bus;
  private final Frames frames;
  private final ServerTrust trust;
  private final int defaultPageSize;

  /** {@code defaultPageSize}: the page of a request without {@code limit} ({@code sync.pageSize}). */
  SyncHandler(EventBus bus, Frames frames, ServerTrust trust, int defaultPageSize) {
    this.bus = Objects.requireNonNull(bus);
    this.frames = Objects.requireNonNull(frames);
    this.trust = Objects.requireNonNull(trust);
    this.defaultPageSize = defaultPageSize;
  }

  Future<JsonNode> dmSyncBatch(Session session, JsonNode payload) {
    return BusReplies.<DmSyncPage>request(bus, Addresses.SYNC_DM_BATCH,
        syncRequest(session, Ops.DM_SYNC_BATCH, payload)).map(page -> {
      ObjectNode response = frames.object();
      ArrayNode items = response.putArray("items");
      Base64.Encoder base64 = Base64.getEncoder();
      for (SyncRepository.DmItem item : page.items()) {
        ObjectNode node = items.addObject().put("syncId", item.syncId()).put("owner", item.owner())
            .put("type", item.typeName());
        ArrayNode blobs = node.putArray("blobsB64");
        if (item.pair()) {
          blobs.add(base64.encodeToString(item.pairBlob()));
        }
        blobs.add(base64.encodeToString(item.blob()));
      }
      response.put("hasMore", page.hasMore());
      return response;
    });
  }

  Future<JsonNode> userSettingsSyncBatch(Session session, JsonNode payload) {
    return BusReplies.<SettingsSyncPage>request(bus, Addresses.SYNC_SETTINGS_BATCH,
            syncRequest(session, Ops.USER_SETTINGS_SYNC_BATCH, payload))
        .map(page -> {
          ObjectNode response = frames.object();
          ArrayNode items = response.putArray("items");
          for (SyncRepository.SettingItem item : page.items()) {
            items.addObject().put("syncId", item.syncId()).put("owner", item.owner()).put("key", item.key())
                .put("updatedAtMs", item.updatedAtMs())
                .set("value", StoredJson.read(frames.mapper(), item.valueJson()));
          }
          response.put("hasMore", page.hasMore());
          return response;
        });
  }

  Future<JsonNode> markAllUserSettingsUnsynced(Session session, JsonNode payload) {
    Fields.of(payload, "payload", Set.of());
    return BusReplies.<Integer>request(bus, Addresses.SYNC_MARK_UNSYNCED, session.login)
        .map(reset -> frames.object().put("reset", reset));
  }

  private SyncBatchRequest syncRequest(Session session, String op, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("sourceServerLogin", "ackSyncIds", "limit",
        "afterSyncId"));
    String puller = trust.syncPuller(session, op, fields.serverName("sourceServerLogin"));
    List<Long> acks = new ArrayList<>();
    if (fields.has("ackSyncIds")) {
      JsonNode ids = fields.required("ackSyncIds");
      if (!ids.isArray() || ids.size() > MAX_ACKS) {
        throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD,
            "payload.ackSyncIds must be an array of at most " + MAX_ACKS + " syncIds");
      }
      for (JsonNode id : ids) {
        if (!id.isIntegralNumber() || !id.canConvertToLong() || id.asLong() < 0) {
          throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "payload.ackSyncIds holds a non-syncId");
        }
        acks.add(id.asLong());
      }
    }
    int limit = (int) fields.optionalLong("limit", 0, MAX_SYNC_PAGE, defaultPageSize);
    long afterSyncId = fields.optionalLong("afterSyncId", 0, Long.MAX_VALUE, 0);
    return new SyncBatchRequest(puller, acks, limit, afterSyncId);
  }
}
