package org.shine.server.sync;

import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.shine.server.config.AppConfig;
import org.shine.server.db.StorageHealth;
import org.shine.server.db.SyncRepository;
import org.shine.server.db.SyncRepository.Sibling;
import org.shine.server.protocol.Ops;
import org.shine.server.util.Backoff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Catches this server up with each sibling (seed §7, PROTOCOL §8 v3): over the one connection to it, first the
 * UserSettingsSyncBatch pages, then the DmSyncBatch pages, each walked once per run by {@link PageWalk} (an item
 * left unACKed holds back nothing after it; a run ends after {@code sync.maxPagesPerRun} pages of each op). Items are
 * stored as synced, quarantined or left for the next run by {@link SettingItemApplier} and {@link DmItemApplier}.
 * One pull per sibling at a time. The periodic {@link #tick} backs off while this server's database fails (twice
 * the period, then four times, up to {@value #MAX_BACKOFF_PERIODS} periods; one line when it starts, one when a tick
 * succeeds again), and {@link #resume} ends the wait when the database is back. Confined to one event loop.
 */
public final class SyncPuller {
  private static final Logger LOG = LoggerFactory.getLogger(SyncPuller.class);
  static final int MAX_BACKOFF_PERIODS = 8;
  private static final int MAX_SIBLINGS_REMEMBERED = 10_000;
  private final AppConfig config;
  private final SyncRepository repository;
  private final PageWalk walk;
  private final SettingItemApplier settingItems;
  private final DmItemApplier dmItems;
  private final StorageHealth health;
  private final Backoff pacing;
  private final Set<String> pulling = new HashSet<>();
  private boolean ticking;
  /** What the last pull from each sibling left unACKed there (a pull that brings nothing new logs at debug). */
  private final Map<String, Integer> lastLeft = new HashMap<>();

  SyncPuller(AppConfig config, SyncRepository repository, PageWalk walk, SettingItemApplier settingItems,
      DmItemApplier dmItems, StorageHealth health) {
    this.config = Objects.requireNonNull(config);
    this.repository = Objects.requireNonNull(repository);
    this.walk = Objects.requireNonNull(walk);
    this.settingItems = Objects.requireNonNull(settingItems);
    this.dmItems = Objects.requireNonNull(dmItems);
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
  Future<PullStats> pull(Sibling sibling) {
    if (!pulling.add(sibling.url())) {
      return Future.succeededFuture(PullStats.NONE);
    }
    PullRun run = new PullRun(sibling);
    return settingsPages(run, PullStats.NONE)
        .compose(s -> dmPages(run, s))
        .onSuccess(s -> report(sibling, s))
        .onFailure(failure -> LOG.debug("sync pull stopped [sibling: {}]: {}", sibling.serverLogin(),
            failure.getMessage()))
        .onComplete(ar -> pulling.remove(sibling.url()));
  }

  /**
   * One line per pull at INFO when it stored or quarantined something, or what it left unACKed there changed; a
   * periodic pull that finds nothing new (every {@code sync.periodMs}) logs at DEBUG only. What this server owes the
   * sibling is not counted here: a count walks the whole backlog, on every pull of a busy pair of servers, for a log
   * line; the gauge {@code shine_sync_lag_items} and the admin API read it when asked.
   */
  private void report(Sibling sibling, PullStats s) {
    Integer before = lastLeft.get(sibling.url());
    boolean news = s.stored() + s.quarantined() > 0 || before == null || before != s.left();
    if (lastLeft.size() >= MAX_SIBLINGS_REMEMBERED && before == null) {
      lastLeft.clear();
    }
    lastLeft.put(sibling.url(), s.left());
    if (news) {
      LOG.info("sync pull [sibling: {}, settings: {}, dm: {}, dropped: {}, quarantined: {}, left unACKed: {},"
          + " pages: {}]", sibling.serverLogin(), s.settings().stored(), s.dm().stored(), s.settings().dropped(),
          s.quarantined(), s.left(), s.settings().pages() + s.dm().pages());
    } else {
      LOG.debug("sync pull: nothing new [sibling: {}, left unACKed: {}]", sibling.serverLogin(), s.left());
    }
  }

  private Future<PullStats> settingsPages(PullRun run, PullStats stats) {
    return walk.walk(run, Ops.USER_SETTINGS_SYNC_BATCH, (r, item) -> settingItems.apply(item))
        .map(tally -> new PullStats(tally, stats.dm()));
  }

  private Future<PullStats> dmPages(PullRun run, PullStats stats) {
    return walk.walk(run, Ops.DM_SYNC_BATCH, dmItems::apply).map(tally -> new PullStats(stats.settings(), tally));
  }

  /** Counts of one pull: its settings pages and its DM pages. */
  record PullStats(PageWalk.Tally settings, PageWalk.Tally dm) {
    static final PullStats NONE = new PullStats(PageWalk.Tally.NONE, PageWalk.Tally.NONE);

    int stored() {
      return settings.stored() + dm.stored();
    }

    int quarantined() {
      return settings.quarantined() + dm.quarantined();
    }

    int left() {
      return settings.left() + dm.left();
    }
  }
}
