package org.shine.server.sync;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import java.time.Clock;
import java.util.Objects;
import org.shine.server.db.SettingsRepository;
import org.shine.server.protocol.SettingValues;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies one UserSettingsSyncBatch item pulled from a sibling (last writer wins, PROTOCOL §8), or says why not: a
 * bad item is quarantined as malformed, a setting the repository refuses because it would take its owner beyond
 * twice a settings quota ({@code QuotaExceededException}) as over quota, both ACKed; one stamped beyond our clock +
 * {@code delivery.maxClockSkewMs} is ACKed and dropped (PROTOCOL §6a: it would win every later write); a storage
 * failure leaves it for the next run.
 */
final class SettingItemApplier {
  private static final Logger LOG = LoggerFactory.getLogger(SettingItemApplier.class);
  private final SettingsRepository settings;
  private final Quarantine quarantine;
  private final Clock clock;
  private final long maxClockSkewMs;

  SettingItemApplier(SettingsRepository settings, Quarantine quarantine, Clock clock, long maxClockSkewMs) {
    this.settings = Objects.requireNonNull(settings);
    this.quarantine = Objects.requireNonNull(quarantine);
    this.clock = Objects.requireNonNull(clock);
    this.maxClockSkewMs = maxClockSkewMs;
  }

  /** Applies {@code item} of an owner routed to both servers; answers its fate. */
  Future<ItemResult> apply(PulledItem item) {
    ParsedSetting setting;
    try {
      setting = parse(item.owner(), item.json());
    } catch (MalformedItemException e) {
      return quarantine.put(item, item.owner(), Triage.MALFORMED.reason(), e.getMessage());
    }
    if (setting.updatedAtMs() > clock.millis() + maxClockSkewMs) {
      LOG.warn("synced setting dropped: stamped in the future [syncId: {}, owner: {}, sibling: {}, updatedAtMs: {}]",
          item.syncId(), item.owner(), item.source().serverLogin(), setting.updatedAtMs());
      return Future.succeededFuture(new ItemResult(item.syncId(), ItemResult.Fate.DROPPED));
    }
    return store(setting).map(v -> ItemResult.stored(item.syncId())).recover(failure -> {
      Triage triage = Triage.of(failure);
      if (triage == Triage.RETRY) {
        LOG.debug("synced setting left for the next run [syncId: {}, sibling: {}]: {}", item.syncId(),
            item.source().serverLogin(), failure.getMessage());
        return Future.succeededFuture(ItemResult.left(item.syncId()));
      }
      return quarantine.put(item, item.owner(), triage.reason(), failure.getMessage());
    });
  }

  /** Applies a setting read by {@link #parse}, if it is the later write. */
  Future<Void> store(ParsedSetting setting) {
    // composed, so that a refusal thrown rather than failed is handled the same
    return Future.succeededFuture().compose(v -> settings.applySynced(setting.owner(), setting.key(),
        setting.valueJson(), setting.updatedAtMs(), clock.millis())).mapEmpty();
  }

  /** Reads a settings item of {@code owner}: a key, a JSON value, a time; throws when one is missing or bad. */
  static ParsedSetting parse(String owner, JsonNode json) throws MalformedItemException {
    String key = json.path("key").isTextual() ? json.get("key").asText() : null;
    if (key == null || key.isEmpty() || key.indexOf('\0') >= 0) {
      throw new MalformedItemException(owner, "a settings item needs a key of text without NUL");
    }
    JsonNode value = json.get("value");
    if (value == null || SettingValues.containsNul(value)) {
      throw new MalformedItemException(owner, "a settings item needs a value without NUL");
    }
    JsonNode updatedAt = json.path("updatedAtMs");
    if (!updatedAt.isIntegralNumber() || !updatedAt.canConvertToLong() || updatedAt.asLong() < 0) {
      throw new MalformedItemException(owner, "a settings item needs updatedAtMs, a time in ms");
    }
    return new ParsedSetting(owner, key, value.toString(), updatedAt.asLong());
  }

  /** A settings item whose fields are sound. */
  record ParsedSetting(String owner, String key, String valueJson, long updatedAtMs) {
  }
}
