package org.shine.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.shine.server.cli.CliContext;
import org.shine.tools.support.Progress;

/** The test bench's command line (help, the subcommands' options, errors) and its progress line, without a server. */
class ToolsCliTest {

  /** What a finished command left. */
  private record Result(int exitCode, String out, String err) {
  }

  private static Result run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    CliContext context = new CliContext(InputStream.nullInputStream(), new PrintStream(out, true,
        StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(), false);
    int code = ToolsCli.execute(context, args);
    return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  @DisplayName("no command prints the usage and exits 2; --help lists bench, chaos, soak and hpke-vectors with options")
  void usage() {
    Result none = run();
    assertThat(none.exitCode()).isEqualTo(2);
    assertThat(none.err()).contains("Usage: shine-tools");
    Result help = run("--help");
    assertThat(help.exitCode()).isZero();
    assertThat(help.out()).contains("bench", "chaos", "soak", "hpke-vectors");
    assertThat(run("bench", "send", "--help").out()).contains("--recipient-server=URL", "--rate=R");
    assertThat(run("chaos", "load", "--help").out()).contains("--sender-server=NODES", "--faults-done=FILE");
    assertThat(run("chaos", "proxy", "--help").out()).contains("--drop-every-ms=M");
    assertThat(run("soak", "--help").out()).contains("--run-dir", "--restart-every-s", "--hub-users");
    assertThat(run("hpke-vectors", "check", "--help").out()).contains("FILE");
  }

  @Test
  @DisplayName("a mistyped option is refused with exit code 2, the nearest name and the tools jar's help")
  void suggestions() {
    Result option = run("chaos", "proxy", "--target", "127.0.0.1:1", "--drop-evry-ms", "5");
    assertThat(option.exitCode()).isEqualTo(2);
    assertThat(option.err()).contains("Possible solutions: --drop-every-ms",
        "see: java -jar shine-tools.jar chaos proxy --help");
  }

  @Test
  @DisplayName("progress: a line with count, share, rate and time piped; a bar on a terminal; a summary at the end")
  void progress() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    CliContext piped = new CliContext(InputStream.nullInputStream(), System.out, new PrintStream(err, true,
        StandardCharsets.UTF_8), Map.of(), false);
    Progress progress = Progress.start("catchup: pairs", piped, 200, () -> 50);
    assertThat(progress.line(50, 2_000_000_000L)).isEqualTo("catchup: pairs: 50/200 (25.0 %), 25/s, 2 s");
    progress.close();
    assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("catchup: pairs: done, 50 in ");

    CliContext terminal = new CliContext(InputStream.nullInputStream(), System.out, new PrintStream(err, true,
        StandardCharsets.UTF_8), Map.of(), true);
    try (Progress bar = Progress.start("bench", terminal, 10, () -> 5)) {
      assertThat(bar.line(5, 1_000_000_000L)).isEqualTo("bench: [###############...............] 5/10 (50.0 %),"
          + " 5/s, 1 s");
    }
  }
}
