package org.shine.server.db;

import java.util.Objects;

/**
 * A write would take an owner past one of its quotas (PROTOCOL §13, {@code quotas.*}): nothing was stored. Mapped to
 * a wire status at the edge (413 {@code QUOTA_EXCEEDED}, naming the quota); the sync puller quarantines a synced
 * item that fails so (§8 v3).
 */
public final class QuotaExceededException extends RuntimeException {
  private final String quota;

  /** {@code quota}: the config key of the quota, e.g. {@code quotas.settingsCount}. */
  public QuotaExceededException(String quota, String message) {
    super(message, null, false, false);
    this.quota = Objects.requireNonNull(quota);
  }

  /** The config key of the quota that would be exceeded. */
  public String quota() {
    return quota;
  }
}
