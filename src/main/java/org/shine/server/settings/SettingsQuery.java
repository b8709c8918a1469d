package org.shine.server.settings;

import java.util.Objects;

/** GetUserSettings of {@code owner}: settings after {@code afterKey} (null: from the first), at most {@code limit}. */
public record SettingsQuery(String owner, String afterKey, int limit) {
  public SettingsQuery {
    Objects.requireNonNull(owner);
  }
}
