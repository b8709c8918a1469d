package org.shine.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The parts of {@code bench send}'s RESULT line that need no server. */
class SendReportTest {

  @Test
  @DisplayName("a RESULT key keeps letters and digits and joins the rest with single underscores")
  void resultKeys() {
    assertThat(SendReport.key("s1 shine_signature_verifications_total{op=\"dm\"}"))
        .isEqualTo("s1_shine_signature_verifications_total_op_dm");
    assertThat(SendReport.key("shine_bench_s1")).isEqualTo("shine_bench_s1");
  }
}
