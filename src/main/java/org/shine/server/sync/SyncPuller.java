package org.shine.server.sync;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.config.AppConfig;
import org.shine.server.db.DirectoryRepository;
import org.shine.server.db.SettingsRepository;
import org.shine.server.db.StorageHealth;
import org.shine.server.db.SyncRepository;
import org.shine.server.db.SyncRepository.Sibling;
import org.shine.server.delivery.SyncedItem;
import org.shine.server.peer.PeerCalls;
import org.shine.server.protocol.Ops;
import org.shine.server.protocol.SettingValues;
import org.shine.server.util.Backoff;
import org.shine.server.util.Json;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Catches this server up with each sibling (seed §7): over the one connection to it, first every
 * UserSettingsSyncBatch page, then every DmSyncBatch page, each request ACKing what the previous page stored.
 * Every item is verified and stored idempotently as synced; an item that fails is not ACKed and comes again.
 * One pull per sibling at a time. The periodic {@link #tick} backs off while this server's database fails (twice
 * the period, then four times, up to {@value #MAX_BACKOFF_PERIODS} periods; one line when it starts, one when a tick
 * succeeds again), and {@link #resume} ends the wait when the database is back. Confined to one event loop.
 */
public final class SyncPuller {
  private static final Logger LOG = LoggerFactory.getLogger(SyncPuller.class);
  static final int MAX_BACKOFF_PERIODS = 8;
  private static final int MAX_SIBLINGS_REMEMBERED = 10_000;
  private final AppConfig config;
  private final EventBus bus;
  private final SyncRepository repository;
  private final SettingsRepository settings;
  private final DirectoryRepository directory;
  private final PeerCalls peers;
  private final Clock clock;
  private final StorageHealth health;
  private final Backoff pacing;
  private final Set<String> pulling = new HashSet<>();
  private boolean ticking;
  /** What the last pull from each sibling reported (a pull that moves nothing new logs at debug). */
  private final Map<String, Long> lastOwed = new HashMap<>();

  public SyncPuller(AppConfig config, EventBus bus, SyncRepository repository, SettingsRepository settings,
      DirectoryRepository directory, PeerCalls peers, Clock clock, StorageHealth health) {
    this.config = Objects.requireNonNull(config);
    this.bus = Objects.requireNonNull(bus);
    this.repository = Objects.requireNonNull(repository);
    this.settings = Objects.requireNonNull(settings);
    this.directory = Objects.requireNonNull(directory);
    this.peers = Objects.requireNonNull(peers);
    this.clock = Objects.requireNonNull(clock);
    this.health = Objects.requireNonNull(health);
    this.pacing = new Backoff(config.sync().periodMs(), config.sync().periodMs() * MAX_BACKOFF_PERIODS);
  }

  /**
   * The periodic pull: skipped while the previous tick runs or while backing off; completes with whether it ran
   * without storage trouble.
   */
  public Future<Boolean> tick() {
    if (ticking || !pacing.due(System.nanoTime())) {
      return Future.succeededFuture(false);
    }
    ticking = true;
    return pullAll(null).transform(ar -> {
      ticking = false;
      if (ar.succeeded()) {
        if (pacing.succeeded()) {
          LOG.info("sync timer resumed its period of {} ms", config.sync().periodMs());
        }
        return Future.succeededFuture(true);
      }
      health.report(ar.cause());
      if (pacing.failed(System.nanoTime())) {
        LOG.warn("sync timer backs off (up to {} ms between pulls) until a pull succeeds: {}",
            config.sync().periodMs() * MAX_BACKOFF_PERIODS, ar.cause().toString());
      } else {
        LOG.debug("sync tick failed again [failures: {}, next in: {} ms]: {}", pacing.failures(), pacing.delayMs(),
            ar.cause().toString());
      }
      return Future.succeededFuture(false);
    });
  }

  /** The database is back: pulls now instead of after the backoff. */
  public Future<Boolean> resume() {
    if (pacing.reset()) {
      LOG.info("sync timer resumed: the database is back");
    }
    return tick();
  }

  /** Whether the periodic pull waits longer than its period after failures. */
  public boolean backingOff() {
    return pacing.backingOff();
  }

  /** Pulls from every sibling (optionally only the one at {@code onlyUrl}). */
  public Future<Void> pullAll(String onlyUrl) {
    return repository.siblings(config.serverLogin()).compose(siblings -> {
      List<Future<?>> pulls = new ArrayList<>();
      for (Sibling sibling : siblings) {
        if (onlyUrl == null || onlyUrl.equals(sibling.url())) {
          pulls.add(pull(sibling));
        }
      }
      return Future.join(pulls).<Void>mapEmpty().otherwiseEmpty();
    });
  }

  /** One catch-up with one sibling; completes with the counts (zero counts when one is already running). */
  public Future<PullStats> pull(Sibling sibling) {
    if (!pulling.add(sibling.url())) {
      return Future.succeededFuture(new PullStats(0, 0, 0));
    }
    PullStats stats = new PullStats(0, 0, 0);
    return settingsPages(sibling, stats)
        .compose(s -> dmPages(sibling, s))
        .compose(s -> repository.lag(sibling.serverLogin()).map(lag -> {
          report(sibling, s, lag.unsynced(), lag.oldestCreatedAtMs() == null ? 0
              : clock.millis() - lag.oldestCreatedAtMs());
          return s;
        }))
        .onFailure(failure -> LOG.debug("sync pull stopped [sibling: {}]: {}", sibling.serverLogin(),
            failure.getMessage()))
        .onComplete(ar -> pulling.remove(sibling.url()));
  }

  /**
   * One line per pull at INFO when it moved something or what is owed to the sibling changed; a periodic pull that
   * finds nothing new (every {@code sync.periodMs}) logs at DEBUG only.
   */
  private void report(Sibling sibling, PullStats s, long owed, long oldestOwedMs) {
    Long before = lastOwed.get(sibling.url());
    boolean news = s.settings() + s.dm() + s.rejected() > 0 || before == null || before != owed;
    if (lastOwed.size() >= MAX_SIBLINGS_REMEMBERED && before == null) {
      lastOwed.clear();
    }
    lastOwed.put(sibling.url(), owed);
    if (news) {
      LOG.info("sync pull [sibling: {}, settings: {}, dm: {}, rejected: {}, owed to it: {}, oldest owed: {} ms]",
          sibling.serverLogin(), s.settings(), s.dm(), s.rejected(), owed, oldestOwedMs);
    } else {
      LOG.debug("sync pull: nothing new [sibling: {}, owed to it: {}]", sibling.serverLogin(), owed);
    }
  }

  private Future<PullStats> settingsPages(Sibling sibling, PullStats stats) {
    return pages(sibling, Ops.USER_SETTINGS_SYNC_BATCH, List.of(), stats, item -> applySetting(sibling, item),
        (before, stored, rejected) -> before.plus(stored, 0, rejected));
  }

  private Future<PullStats> dmPages(Sibling sibling, PullStats stats) {
    return pages(sibling, Ops.DM_SYNC_BATCH, List.of(), stats, item -> applyDm(sibling, item),
        (before, stored, rejected) -> before.plus(0, stored, rejected));
  }

  /**
   * Pages of one op until none is left: each request ACKs what the previous page stored; the last page's ACKs
   * travel alone (a page of nothing but rejected items also ends the run, so it is not fetched forever).
   */
  private Future<PullStats> pages(Sibling sibling, String op, List<Long> acks, PullStats stats,
      Function<JsonNode, Future<Long>> apply, Counter count) {
    return peers.callInSession(sibling.url(), op, request(acks, config.sync().pageSize())).compose(page -> {
      List<Future<Long>> stored = new ArrayList<>();
      for (JsonNode item : page.path("items")) {
        stored.add(apply.apply(item));
      }
      return collect(stored).compose(ok -> {
        PullStats next = count.add(stats, ok.size(), stored.size() - ok.size());
        if (page.path("hasMore").asBoolean(false) && !ok.isEmpty()) {
          return pages(sibling, op, ok, next, apply, count);
        }
        return ok.isEmpty() ? Future.succeededFuture(next)
            : peers.callInSession(sibling.url(), op, request(ok, 0)).map(v -> next);
      });
    });
  }

  /** Adds one page's stored and rejected items to the counts of its kind. */
  @FunctionalInterface
  private interface Counter {
    PullStats add(PullStats before, int stored, int rejected);
  }

  /**
   * A sibling's setting, applied only for an owner whose current routes list both servers (PROTOCOL §6a). One
   * stamped beyond our clock + the skew limit is ACKed and dropped (logged): it would win every later write.
   */
  private Future<Long> applySetting(Sibling sibling, JsonNode item) {
    long syncId = item.path("syncId").asLong(-1);
    String owner = item.path("owner").asText(null);
    String key = item.path("key").isTextual() ? item.get("key").asText() : null;
    JsonNode value = item.get("value");
    long updatedAt = item.path("updatedAtMs").isIntegralNumber() && item.get("updatedAtMs").canConvertToLong()
        ? item.get("updatedAtMs").asLong() : -1;
    if (syncId < 0 || owner == null || key == null || key.isEmpty() || key.indexOf('\0') >= 0 || value == null
        || SettingValues.containsNul(value) || updatedAt < 0) {
      return Future.failedFuture("malformed settings item");
    }
    long latest = clock.millis() + config.delivery().maxClockSkewMs();
    if (updatedAt > latest) {
      LOG.warn("synced setting dropped: stamped in the future [syncId: {}, owner: {}, sibling: {}, updatedAtMs: {}]",
          syncId, owner, sibling.serverLogin(), updatedAt);
      return Future.succeededFuture(syncId);
    }
    return directory.find(owner).compose(user -> {
      if (user.isEmpty() || !user.get().servedBy(config.serverLogin())
          || !user.get().servedBy(sibling.serverLogin())) {
        return Future.failedFuture("owner " + owner + " is not a user of both " + config.serverLogin() + " and "
            + sibling.serverLogin());
      }
      return settings.applySynced(owner, key, value.toString(), updatedAt, clock.millis()).map(v -> syncId);
    });
  }

  private Future<Long> applyDm(Sibling sibling, JsonNode item) {
    long syncId = item.path("syncId").asLong(-1);
    String owner = item.path("owner").asText(null);
    String type = item.path("type").asText("");
    List<byte[]> blobs = new ArrayList<>();
    try {
      for (JsonNode blob : item.path("blobsB64")) {
        blobs.add(Base64.getDecoder().decode(blob.asText()));
      }
    } catch (IllegalArgumentException e) {
      return Future.failedFuture("bad base64 in item " + syncId);
    }
    if (syncId < 0 || owner == null || !Set.of("pair", "incoming", "receipt", "tombstone").contains(type)) {
      return Future.failedFuture("malformed DM item");
    }
    SyncedItem synced = new SyncedItem(owner, type.equals("pair"), blobs, sibling.serverLogin(), sibling.url());
    return BusReplies.<Boolean>request(bus, Addresses.DM_APPLY_SYNCED, synced)
        .map(v -> syncId)
        .onFailure(failure -> LOG.debug("synced item rejected [syncId: {}, sibling: {}]: {}", syncId,
            sibling.serverLogin(), failure.getMessage()));
  }

  private ObjectNode request(List<Long> acks, int limit) {
    ObjectNode payload = Json.MAPPER.createObjectNode().put("sourceServerLogin", config.serverLogin());
    ArrayNode ids = payload.putArray("ackSyncIds");
    acks.forEach(ids::add);
    payload.put("limit", limit);
    return payload;
  }

  /** The values of the futures that succeeded, in order. */
  private static Future<List<Long>> collect(List<Future<Long>> futures) {
    return Future.join(new ArrayList<>(futures)).otherwiseEmpty().map(v -> {
      List<Long> ok = new ArrayList<>();
      for (Future<Long> f : futures) {
        if (f.succeeded()) {
          ok.add(f.result());
        }
      }
      return ok;
    });
  }

  /** Counts of one pull: settings and DM items stored, and items rejected (not ACKed). */
  public record PullStats(int settings, int dm, int rejected) {
    PullStats plus(int moreSettings, int moreDm, int moreRejected) {
      return new PullStats(settings + moreSettings, dm + moreDm, rejected + moreRejected);
    }
  }
}
