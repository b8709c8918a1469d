package org.shine.server.settings;

import java.util.Map;

/** A user's settings: key → value as JSON text. */
public record UserSettings(Map<String, String> values) {
  public UserSettings {
    values = Map.copyOf(values);
  }
}
