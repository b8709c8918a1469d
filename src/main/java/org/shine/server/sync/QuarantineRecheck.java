package org.shine.server.sync;

import io.vertx.core.Future;
import io.vertx.core.shareddata.LocalMap;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import org.shine.server.db.QuarantineRepository;
import org.shine.server.db.QuarantineRepository.Entry;
import org.shine.server.db.SyncRepository.Sibling;
import org.shine.server.protocol.Ops;
import org.shine.server.util.Json;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks quarantined items again when a card changes (PROTOCOL §8 v3: the directory publishes the login of every
 * card it accepts): the items whose owner or author is that login are applied again as they were received, oldest
 * first, one at a time, at most {@value #PER_CHANGE} per change; those that now store leave the quarantine, the
 * others keep their row with the latest reason. One check per login at a time on the node (every sync instance
 * hears the change; {@code running} is the node's map of logins being checked), and at most {@value #MAX_RUNNING}
 * logins at once (a change beyond waits for the next one of that login).
 */
final class QuarantineRecheck {
  static final int PER_CHANGE = 1_000;
  static final int MAX_RUNNING = 64;
  private static final Logger LOG = LoggerFactory.getLogger(QuarantineRecheck.class);
  private final QuarantineRepository repository;
  private final DmItemApplier dmItems;
  private final SettingItemApplier settingItems;
  private final SharedOwners owners;
  private final Clock clock;
  private final LocalMap<String, Boolean> running;

  QuarantineRecheck(QuarantineRepository repository, DmItemApplier dmItems, SettingItemApplier settingItems,
      SharedOwners owners, Clock clock, LocalMap<String, Boolean> running) {
    this.running = Objects.requireNonNull(running);
    this.owners = Objects.requireNonNull(owners);
    this.repository = Objects.requireNonNull(repository);
    this.dmItems = Objects.requireNonNull(dmItems);
    this.settingItems = Objects.requireNonNull(settingItems);
    this.clock = Objects.requireNonNull(clock);
  }

  /** The card of {@code login} changed: completes with how many of its items left the quarantine. */
  Future<Integer> cardChanged(String login) {
    if (running.size() >= MAX_RUNNING || running.putIfAbsent(login, Boolean.TRUE) != null) {
      return Future.succeededFuture(0);
    }
    return repository.ofOwnerOrAuthor(login, PER_CHANGE)
        .compose(this::checkInTurn)
        .onSuccess(released -> {
          if (released > 0) {
            LOG.info("quarantined items stored after a card change [login: {}, stored: {}]", login, released);
          }
        })
        .onFailure(failure -> LOG.debug("quarantine check after a card change failed [login: {}]: {}", login,
            failure.getMessage()))
        .onComplete(ar -> running.remove(login));
  }

  private Future<Integer> checkInTurn(List<Entry> entries) {
    Future<Integer> chain = Future.succeededFuture(0);
    for (Entry entry : entries) {
      chain = chain.compose(released -> check(entry).map(stored -> stored ? released + 1 : released));
    }
    return chain;
  }

  /**
   * Applies one item again, if its owner is still routed to both servers: removed when it stores, its row updated
   * when it still cannot.
   */
  private Future<Boolean> check(Entry entry) {
    Sibling source = new Sibling(entry.sourceServer(), entry.sourceUrl());
    return owners.shared(entry.owner(), source)
        .compose(shared -> shared ? apply(entry, source) : Future.failedFuture(new IllegalStateException(
            entry.owner() + " is no longer routed to both servers")))
        .compose(v -> repository.remove(entry.id()).map(true))
        .recover(failure -> {
          Triage triage = failure instanceof MalformedItemException ? Triage.MALFORMED : Triage.of(failure);
          if (triage == Triage.RETRY) {
            return Future.succeededFuture(false);
          }
          return repository.checkedAgain(entry.id(), triage.reason().tag(), String.valueOf(failure.getMessage()),
              clock.millis()).map(false);
        });
  }

  private Future<Void> apply(Entry entry, Sibling source) {
    try {
      var json = Json.MAPPER.readTree(entry.itemJson());
      if (entry.op().equals(Ops.USER_SETTINGS_SYNC_BATCH)) {
        return settingItems.store(SettingItemApplier.parse(entry.owner(), json));
      }
      return dmItems.store(DmItemApplier.parse(entry.owner(), json), source);
    } catch (MalformedItemException e) {
      return Future.failedFuture(e);
    } catch (java.io.IOException e) {
      return Future.failedFuture(new MalformedItemException(entry.author(), "the stored item is not JSON"));
    }
  }
}
