package org.shine.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.config.AppConfig;
import org.shine.server.config.ConfigLoader;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;

/** The five §13 limits of a node on a clock the test moves: each refusal names its key, each table is bounded. */
class OpLimitsTest {
  private final AtomicLong nanos = new AtomicLong(5_000_000_000L);
  private final AppConfig.Limits limits = ConfigLoader.parse("{\"limits\":{\"sendsPerUserPerS\":2,\"opsPerPeerPerS\":2,"
      + "\"cardsPerIpPerMin\":2,\"openOpsPerIpPerS\":2,\"openOpsPerLoginPerS\":2,\"inboundPerRecipientPerS\":2}}",
      Map.of()).limits();

  @Test
  @DisplayName("each limit refuses the third act in a burst with 429 RATE_LIMITED naming its config key")
  void refusalsNameTheirKey() {
    OpLimits ops = new OpLimits(limits, 100, nanos::get);
    assertRefusedThird(() -> ops.admitWrite("alice"), "limits.sendsPerUserPerS");
    assertRefusedThird(() -> ops.admitPeerOp("s2"), "limits.opsPerPeerPerS");
    assertRefusedThird(() -> ops.admitCardPublish("127.0.0.1"), "limits.cardsPerIpPerMin");
    assertRefusedThird(() -> ops.admitInbound("bob"), "limits.inboundPerRecipientPerS");
    assertRefusedThird(() -> ops.admitOpenOp("127.0.0.1", null), "limits.openOpsPerIpPerS");
    AtomicInteger addresses = new AtomicInteger();
    assertRefusedThird(() -> ops.admitOpenOp("127.0.1." + addresses.incrementAndGet(), "mallory"),
        "limits.openOpsPerLoginPerS");
  }

  @Test
  @DisplayName("100,000 distinct writers, addresses, authors, recipients and peers leave at most the table bound of cells per"
      + " limit; a key past the bound shares the overflow cell")
  void tablesAreBounded() {
    OpLimits ops = new OpLimits(limits, 16, nanos::get);
    for (int i = 0; i < 100_000; i++) {
      String key = "k" + i;
      tryIt(() -> ops.admitWrite(key));
      tryIt(() -> ops.admitPeerOp(key));
      tryIt(() -> ops.admitCardPublish(key));
      tryIt(() -> ops.admitOpenOp(key, key));
      tryIt(() -> ops.admitInbound(key));
    }
    assertThat(ops.tracked()).isLessThanOrEqualTo(6 * 16);
    assertThatThrownBy(() -> ops.admitInbound("one-more")).isInstanceOf(ProtocolException.class);
  }

  private static void assertRefusedThird(Runnable act, String key) {
    assertThatCode(act::run).doesNotThrowAnyException();
    assertThatCode(act::run).doesNotThrowAnyException();
    assertThatThrownBy(act::run).isInstanceOfSatisfying(ProtocolException.class, e -> {
      assertThat(e.status()).isEqualTo(429);
      assertThat(e.code()).isEqualTo(ErrorCode.RATE_LIMITED);
      assertThat(e.getMessage()).contains(key);
    });
  }

  private static void tryIt(Runnable act) {
    try {
      act.run();
    } catch (ProtocolException refused) {
      // past the limit: what this test counts is the cells
    }
  }
}
