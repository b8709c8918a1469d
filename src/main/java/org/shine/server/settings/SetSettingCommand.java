package org.shine.server.settings;

/** SetUserSetting from {@code owner}'s session: the value as JSON text. */
public record SetSettingCommand(String owner, String key, String valueJson) {
}
