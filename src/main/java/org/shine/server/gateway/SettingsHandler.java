package org.shine.server.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import java.util.Objects;
import java.util.Set;
import org.shine.server.bus.Addresses;
import org.shine.server.bus.BusReplies;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Fields;
import org.shine.server.protocol.Frames;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.SettingValues;
import org.shine.server.protocol.Status;
import org.shine.server.db.SettingsRepository;
import org.shine.server.settings.SetSettingCommand;
import org.shine.server.settings.SettingsPage;
import org.shine.server.settings.SettingsQuery;

/**
 * A logged-in user's settings (PROTOCOL §5, §13): GetUserSettings page by page, and SetUserSetting with the limits of
 * key and value (the quotas are the repository's).
 */
final class SettingsHandler {
  private static final int MAX_SETTING_KEY = 128;
  private static final int MAX_SETTING_VALUE = 16 * 1024;
  /**
   * A value must also fit the GetUserSettings response, where it sits one level deeper than in the request, within
   * the 64 levels every reader of the project takes; 32 leaves room.
   */
  private static final int MAX_SETTING_DEPTH = 32;
  /** Settings per GetUserSettings page at most (fewer when they do not fit {@code limits.maxResponseBytes}). */
  static final int MAX_PAGE = 1_000;
  /** Longer than any key a user can write, with room for keys that came by sync. */
  private static final int MAX_AFTER_KEY = 1_024;
  private final EventBus bus;
  private final Frames frames;

  SettingsHandler(EventBus bus, Frames frames) {
    this.bus = Objects.requireNonNull(bus);
    this.frames = Objects.requireNonNull(frames);
  }

  /**
   * GetUserSettings {afterKey?, limit?} → {settings, nextKey?} (PROTOCOL §13): one page in key order, under
   * {@code limits.maxResponseBytes}; {@code nextKey}, when present, is the {@code afterKey} of the next page.
   */
  Future<JsonNode> getUserSettings(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("afterKey", "limit"));
    String afterKey = fields.has("afterKey") ? fields.requiredString("afterKey") : null;
    if (afterKey != null && (afterKey.isEmpty() || afterKey.length() > MAX_AFTER_KEY
        || afterKey.indexOf('\0') >= 0)) {
      throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "payload.afterKey must be 1.." + MAX_AFTER_KEY
          + " characters without NUL (U+0000): a key of the previous page");
    }
    int limit = (int) fields.optionalLong("limit", 1, MAX_PAGE, MAX_PAGE);
    return BusReplies.<SettingsPage>request(bus, Addresses.SETTINGS_GET,
        new SettingsQuery(session.login, afterKey, limit)).map(page -> {
          ObjectNode response = frames.object();
          ObjectNode values = response.putObject("settings");
          for (SettingsRepository.Setting setting : page.settings()) {
            values.set(setting.key(), StoredJson.read(frames.mapper(), setting.valueJson()));
          }
          if (page.nextKey() != null) {
            response.put("nextKey", page.nextKey());
          }
          return response;
        });
  }

  Future<JsonNode> setUserSetting(Session session, JsonNode payload) {
    Fields fields = Fields.of(payload, "payload", Set.of("key", "value"));
    String key = fields.requiredString("key");
    if (key.isEmpty() || key.length() > MAX_SETTING_KEY) {
      throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "payload.key must be 1.." + MAX_SETTING_KEY
          + " characters");
    }
    if (key.indexOf('\0') >= 0) {
      throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "payload.key must not contain NUL (U+0000)");
    }
    if (!payload.has("value")) {
      throw ProtocolException.badRequest(ErrorCode.MISSING_FIELD, "missing field payload.value");
    }
    if (SettingValues.containsNul(payload.get("value"))) {
      throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD,
          "payload.value must not contain NUL (U+0000) in any string or name");
    }
    if (SettingValues.depth(payload.get("value")) > MAX_SETTING_DEPTH) {
      throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "payload.value nests deeper than "
          + MAX_SETTING_DEPTH + " levels");
    }
    if (SettingValues.containsNonFiniteNumber(payload.get("value"))) {
      throw ProtocolException.badRequest(ErrorCode.INVALID_FIELD,
          "payload.value holds a number beyond the range of a double");
    }
    String valueJson = payload.get("value").toString();
    if (valueJson.length() > MAX_SETTING_VALUE) {
      throw new ProtocolException(Status.TOO_LARGE, ErrorCode.INVALID_FIELD, "payload.value exceeds "
          + MAX_SETTING_VALUE + " characters of JSON");
    }
    return BusReplies.<Long>request(bus, Addresses.SETTINGS_SET, new SetSettingCommand(session.login, key,
        valueJson)).map(updatedAt -> frames.object().put("key", key).put("updatedAtMs", updatedAt));
  }
}
