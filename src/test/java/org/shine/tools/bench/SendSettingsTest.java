package org.shine.tools.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.cli.CliFailure;
import picocli.CommandLine;

/** {@code bench send}'s command line, checked before anything is dialed. */
class SendSettingsTest {

  private static SendSettings parse(String... args) {
    SendOptions options = new SendOptions();
    new CommandLine(options).parseArgs(args);
    return SendSettings.from(options);
  }

  @Test
  @DisplayName("--flood-peer dead takes loopback --dead-route LOGIN=URL values, in order")
  void deadRoutes() {
    SendSettings settings = parse("--server", "ws://127.0.0.1:7301/ws", "--flood-rate", "20", "--flood-peer", "dead",
        "--dead-route", "s14=ws://127.0.0.1:7314/ws", "--dead-route", "s15=ws://127.0.0.1:7315/ws");

    assertThat(settings.deadRoutes()).containsExactly(Map.entry("s14", "ws://127.0.0.1:7314/ws"),
        Map.entry("s15", "ws://127.0.0.1:7315/ws"));
    assertThat(parse("--server", "ws://127.0.0.1:7301/ws").deadRoutes()).isEqualTo(List.of());
  }

  @Test
  @DisplayName("a dead route that is not LOGIN=URL on loopback, or one without --flood-peer dead, is a usage error")
  void badDeadRoutes() {
    for (String[] args : List.of(
        new String[] {"--flood-peer", "dead"},
        new String[] {"--dead-route", "s14=ws://127.0.0.1:7314/ws"},
        new String[] {"--flood-peer", "dead", "--dead-route", "ws://127.0.0.1:7314/ws"},
        new String[] {"--flood-peer", "dead", "--dead-route", "s14=ws://localhost:7314/ws"},
        new String[] {"--flood-peer", "dead", "--dead-route", "s14=http://127.0.0.1:7314/ws"})) {
      String[] all = new String[args.length + 2];
      all[0] = "--server";
      all[1] = "ws://127.0.0.1:7301/ws";
      System.arraycopy(args, 0, all, 2, args.length);
      assertThatThrownBy(() -> parse(all)).as(String.join(" ", args)).isInstanceOf(CliFailure.class)
          .hasMessageContaining("--dead-route");
    }
  }
}
