package org.shine.server.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.dm.DmCodec;
import org.shine.server.dm.DmContainer;
import org.shine.server.dm.DmKind;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.KeyRing;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.support.MutableClock;

/** What a retired or revoked key may still sign (PROTOCOL §4 v3), judged without a server. */
class SignerCheckTest {
  private static final long WINDOW_MS = 3_600_000 + 600_000;
  private final MutableClock clock = MutableClock.now();
  private final SignerCheck check = new SignerCheck(clock, WINDOW_MS);
  private final byte[] key = Ed25519Signer.generate().privateKey();

  private DmContainer container(DmKind kind, long createdAtMs, long revision) {
    return DmCodec.sign(kind, createdAtMs, 1, revision, "alice", "bob", kind == DmKind.TOMBSTONE ? "alice|bob|1|1|2"
        : "", new byte[0], key);
  }

  private String verdict(KeyRing.Match match, DmContainer container, boolean authorsServer) {
    try {
      check.check(match, container, authorsServer);
      return "accepted";
    } catch (ProtocolException e) {
      return e.status() + " " + e.code();
    }
  }

  @Test
  @DisplayName("a retired key signs a first version written before it retired, only within the retry window")
  void retryWindow() {
    long retiredAt = clock.millis();
    KeyRing.Match retired = new KeyRing.Match(KeyRing.Standing.RETIRED, retiredAt);
    DmContainer before = container(DmKind.OUTGOING, retiredAt - 1, 0);

    assertThat(verdict(retired, before, false)).isEqualTo("accepted");
    assertThat(verdict(retired, container(DmKind.OUTGOING, retiredAt, 0), false))
        .isEqualTo("400 " + ErrorCode.BAD_SIGNATURE);
    assertThat(verdict(retired, container(DmKind.OUTGOING, retiredAt - 1, 1), false))
        .isEqualTo("400 " + ErrorCode.BAD_SIGNATURE);
    assertThat(verdict(retired, container(DmKind.TOMBSTONE, retiredAt - 1, 0), false))
        .isEqualTo("400 " + ErrorCode.BAD_SIGNATURE);
    clock.advance(Duration.ofMillis(WINDOW_MS));
    assertThat(verdict(retired, before, false)).isEqualTo("400 " + ErrorCode.BAD_SIGNATURE);
  }

  @Test
  @DisplayName("the author's or owner's servers may still hand on what a retired key signed; a revoked key signs nothing")
  void serversAndRevocation() {
    long retiredAt = clock.millis() - 10 * WINDOW_MS;
    KeyRing.Match retired = new KeyRing.Match(KeyRing.Standing.RETIRED, retiredAt);

    assertThat(verdict(retired, container(DmKind.TOMBSTONE, retiredAt - 5, 0), true)).isEqualTo("accepted");
    assertThat(verdict(retired, container(DmKind.OUTGOING, retiredAt - 5, 3), true)).isEqualTo("accepted");
    assertThat(verdict(KeyRing.Match.REVOKED, container(DmKind.OUTGOING, retiredAt - 5, 0), true))
        .isEqualTo("400 " + ErrorCode.KEY_REVOKED);
    assertThat(verdict(KeyRing.Match.NONE, container(DmKind.OUTGOING, retiredAt - 5, 0), true))
        .isEqualTo("400 " + ErrorCode.BAD_SIGNATURE);
    assertThat(verdict(KeyRing.Match.CURRENT, container(DmKind.READ_RECEIPT, clock.millis(), 0), false))
        .isEqualTo("accepted");
  }

  @Test
  @DisplayName("several containers stand as their weakest signature")
  void weakestMatch() {
    KeyRing.Match early = new KeyRing.Match(KeyRing.Standing.RETIRED, 100);
    KeyRing.Match late = new KeyRing.Match(KeyRing.Standing.RETIRED, 200);

    assertThat(KeyRing.Match.CURRENT.weaker(late)).isEqualTo(late);
    assertThat(late.weaker(early)).isEqualTo(early);
    assertThat(early.weaker(KeyRing.Match.REVOKED)).isEqualTo(KeyRing.Match.REVOKED);
    assertThat(KeyRing.Match.NONE.weaker(KeyRing.Match.CURRENT)).isEqualTo(KeyRing.Match.NONE);
  }
}
