package org.shine.tools.soak;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.cli.CliFailure;
import picocli.CommandLine;

/** The soak's options as {@link SoakSettings} reads them, without a server. */
class SoakSettingsTest {

  private static SoakCommand parsed(String... extra) {
    SoakCommand command = new SoakCommand();
    List<String> args = new java.util.ArrayList<>(List.of("--run-dir", "run/soak",
        "--server", "s1=ws://127.0.0.1:7401/ws", "--server", "s2=ws://127.0.0.1:7402/ws",
        "--server", "s3=ws://127.0.0.1:7403/ws", "--server", "s4=ws://127.0.0.1:7404/ws"));
    args.addAll(List.of(extra));
    new CommandLine(command).parseArgs(args.toArray(String[]::new));
    return command;
  }

  @Test
  @DisplayName("defaults: the restarts go s2, s3, s4, s1; the baseline is at 300 s of an hour; a third of a short run")
  void defaults() {
    SoakSettings settings = SoakSettings.of(parsed("--server-jar", "target/shine-server.jar"));
    assertThat(settings.restartOrder()).containsExactly("s2", "s3", "s4", "s1");
    assertThat(settings.baselineS()).isEqualTo(300);
    assertThat(settings.serverJar()).isEqualTo(Path.of("target/shine-server.jar"));
    assertThat(settings.url(2)).isEqualTo("ws://127.0.0.1:7403/ws");
    assertThat(SoakSettings.of(parsed("--seconds", "120", "--restart-every-s", "0")).baselineS()).isEqualTo(40);
  }

  @Test
  @DisplayName("without restarts no server jar is needed; --java-opts split on blanks")
  void noRestarts() {
    SoakSettings settings = SoakSettings.of(parsed("--restart-every-s", "0", "--java-opts", " -Xmx256m  -Dx=1 "));
    assertThat(settings.serverJar()).isNull();
    assertThat(settings.javaOpts()).containsExactly("-Xmx256m", "-Dx=1");
  }

  @Test
  @DisplayName("an unknown server in --restart, or more polling users than users, is a usage error")
  void refused() {
    assertThatThrownBy(() -> SoakSettings.of(parsed("--restart", "s2,s9", "--restart-every-s", "0")))
        .isInstanceOf(CliFailure.class).hasMessageContaining("s9");
    assertThatThrownBy(() -> SoakSettings.of(parsed("--users", "2", "--hub-users", "3", "--restart-every-s", "0")))
        .isInstanceOf(CliFailure.class).hasMessageContaining("bad soak options");
  }

  @Test
  @DisplayName("an HTTP base from a WebSocket URL")
  void httpOf() {
    assertThat(SoakSettings.httpOf("ws://127.0.0.1:7401/ws")).isEqualTo("http://127.0.0.1:7401");
  }
}
