package org.shine.server.peer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.util.Json;

class PeerProbeTest {
  private static final ObjectNode PAYLOAD = Json.MAPPER.createObjectNode().put("incomingBlobB64", "AAAA");

  @Test
  @DisplayName("timeoutsToDown timeouts in a row make the destination down once; an answer between them starts"
      + " the count again")
  void timeoutsInARow() {
    PeerProbe probe = new PeerProbe(3, 5_000);
    assertThat(probe.timedOut("ReceiveIncomingMessage", PAYLOAD)).isFalse();
    assertThat(probe.timedOut("ReceiveIncomingMessage", PAYLOAD)).isFalse();
    probe.answered();
    assertThat(probe.timedOut("ReceiveIncomingMessage", PAYLOAD)).isFalse();
    assertThat(probe.timedOut("ReceiveIncomingMessage", PAYLOAD)).isFalse();
    assertThat(probe.holdsDown()).isFalse();

    assertThat(probe.timedOut("GetDmDeliveryStatus", PAYLOAD)).as("the third in a row").isTrue();
    assertThat(probe.holdsDown()).isTrue();
    assertThat(probe.timedOut("ServerAuthChallenge", PAYLOAD)).as("already down: not again").isFalse();
    assertThat(probe.op()).as("the probe: the call that made it down").isEqualTo("GetDmDeliveryStatus");
    assertThat(probe.payload()).isSameAs(PAYLOAD);
  }

  @Test
  @DisplayName("an answer to another call does not make it up; only up() does, and then it takes timeoutsToDown"
      + " timeouts again")
  void downUntilTheProbeIsAnswered() {
    PeerProbe probe = new PeerProbe(2, 5_000);
    assertThat(probe.unread("ReceiveIncomingMessage", PAYLOAD)).isTrue();
    assertThat(probe.unread("ReceiveIncomingMessage", PAYLOAD)).isFalse();
    probe.answered();
    assertThat(probe.holdsDown()).isTrue();

    probe.up();

    assertThat(probe.holdsDown()).isFalse();
    assertThat(probe.timedOut("ReceiveIncomingMessage", PAYLOAD)).isFalse();
    assertThat(probe.timedOut("ReceiveIncomingMessage", PAYLOAD)).isTrue();
  }

  @Test
  @DisplayName("the probe's delay doubles from 250 ms up to the cap, and starts again at each new down")
  void delays() {
    PeerProbe probe = new PeerProbe(1, 5_000);
    probe.timedOut("ReceiveIncomingMessage", PAYLOAD);
    long[] delays = new long[7];
    for (int i = 0; i < delays.length; i++) {
      delays[i] = probe.nextDelayMs();
    }
    assertThat(delays).containsExactly(250, 500, 1_000, 2_000, 4_000, 5_000, 5_000);
    probe.up();
    probe.timedOut("ReceiveIncomingMessage", PAYLOAD);
    assertThat(probe.nextDelayMs()).isEqualTo(250);
  }
}
