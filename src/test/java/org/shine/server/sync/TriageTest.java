package org.shine.server.sync;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.bus.Failures;
import org.shine.server.db.QuotaExceededException;
import org.shine.server.db.StorageBusyException;
import org.shine.server.metrics.QuarantineReason;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolErrors;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.protocol.Status;

/**
 * What the puller does with an item that failed to store, by why (PROTOCOL §8 v3). The settings quota is enforced
 * by {@code SettingsRepository.applySynced}, which fails with {@link QuotaExceededException} beyond twice a quota:
 * that failure, raw or as it reads after the bus, is quarantined as over quota.
 */
class TriageTest {

  @Test
  @DisplayName("a settings write beyond twice a quota is quarantined as over_quota, raw or mapped to 413")
  void overQuota() {
    QuotaExceededException refused = new QuotaExceededException("quotas.settingsCount", "beyond twice the quota");

    assertThat(Triage.of(refused)).isEqualTo(Triage.OVER_QUOTA);
    assertThat(Triage.of(Failures.classify(refused))).isEqualTo(Triage.OVER_QUOTA);
    assertThat(Triage.OVER_QUOTA.reason()).isEqualTo(QuarantineReason.OVER_QUOTA);
    assertThat(QuarantineReason.OVER_QUOTA.tag()).isEqualTo("over_quota");
  }

  @Test
  @DisplayName("containers that never store as they are are malformed or a conflict; a bad signature asks for a"
      + " card refresh first")
  void permanent() {
    assertThat(Triage.of(ProtocolException.badRequest(ErrorCode.BAD_CONTAINER, "x"))).isEqualTo(Triage.MALFORMED);
    assertThat(Triage.of(ProtocolException.badRequest(ErrorCode.WRONG_KIND, "x"))).isEqualTo(Triage.MALFORMED);
    assertThat(Triage.of(ProtocolException.badRequest(ErrorCode.INVALID_FIELD, "x"))).isEqualTo(Triage.MALFORMED);
    assertThat(Triage.of(ProtocolException.badRequest(ErrorCode.SELF_MESSAGE, "x"))).isEqualTo(Triage.MALFORMED);
    assertThat(Triage.of(new ProtocolException(Status.CONFLICT, ErrorCode.CONTENT_CONFLICT, "x")))
        .isEqualTo(Triage.CONFLICT);
    assertThat(Triage.of(ProtocolException.badRequest(ErrorCode.BAD_SIGNATURE, "x")))
        .isEqualTo(Triage.BAD_SIGNATURE);
    assertThat(Triage.BAD_SIGNATURE.reason()).isEqualTo(QuarantineReason.BAD_SIGNATURE);
  }

  @Test
  @DisplayName("created in the future, owner not routed to both, unknown users and transient failures are left for"
      + " the next run")
  void leftForNextRun() {
    assertThat(Triage.of(ProtocolException.badRequest(ErrorCode.CLOCK_SKEW, "x"))).isEqualTo(Triage.RETRY);
    assertThat(Triage.of(new ProtocolException(Status.FORBIDDEN, ErrorCode.NOT_SIBLING, "x")))
        .isEqualTo(Triage.RETRY);
    assertThat(Triage.of(new ProtocolException(Status.NOT_FOUND, ErrorCode.USER_NOT_FOUND, "x")))
        .isEqualTo(Triage.RETRY);
    assertThat(Triage.of(new ProtocolException(Status.MISDIRECTED, ErrorCode.NOT_ACCESS_SERVER, "x")))
        .isEqualTo(Triage.RETRY);
    assertThat(Triage.of(ProtocolErrors.storageUnavailable())).isEqualTo(Triage.RETRY);
    assertThat(Triage.of(new ProtocolException(Status.UNAVAILABLE, ErrorCode.OVERLOADED, "timeout")))
        .isEqualTo(Triage.RETRY);
    assertThat(Triage.of(new StorageBusyException("full"))).isEqualTo(Triage.RETRY);
    assertThat(Triage.of(new IllegalStateException("anything else"))).isEqualTo(Triage.RETRY);
  }
}
