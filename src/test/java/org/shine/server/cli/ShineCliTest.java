package org.shine.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The command line's parsing, help, suggestions and completion script, without any server. */
class ShineCliTest {

  @Test
  @DisplayName("no command prints the usage and exits 2; help and --help exit 0 and list every command")
  void usage() {
    Cli.Result none = Cli.run();
    assertThat(none.exitCode()).isEqualTo(2);
    assertThat(none.err()).contains("Usage: shine-server");
    for (String help : new String[] {"help", "--help"}) {
      Cli.Result result = Cli.run(help);
      assertThat(result.exitCode()).isZero();
      assertThat(result.out()).contains("server", "keygen", "client", "adapter", "admin", "generate-completion",
          "Exit codes: 0 ok");
    }
    assertThat(Cli.run("client", "help", "chat").out()).contains("--peer=LOGIN", "--terminal");
    assertThat(Cli.run("admin", "--help").out()).contains("peers", "deliveries", "retry-peer", "user",
        "sync-quarantine");
  }

  @Test
  @DisplayName("every command's line in its parent's list is a whole sentence (the list shows only the first line of a"
      + " description), and the chat's help names every tick, the pending one too")
  void commandSummariesAreWholeSentences() {
    List<CommandLine> all = allCommands();
    for (CommandLine command : all) {
      String[] description = command.getCommandSpec().usageMessage().description();
      if (description.length > 0 && !command.getCommandName().equals("help")) {
        assertThat(description[0].strip()).as(command.getCommandSpec().qualifiedName()).endsWith(".");
      }
    }
    assertThat(Cli.run("client", "chat", "--help").out()).contains("… sending", "✓ accepted", "✓✓ read",
        "! not delivered");
  }

  @Test
  @DisplayName("every command and subcommand answers --help with its usage and exit code 0 (an option of its own"
      + " named like a standard one, as register's card version once was, takes --help away)")
  void everyCommandHasHelp() {
    List<CommandLine> all = allCommands();
    assertThat(all).hasSizeGreaterThan(20);
    for (CommandLine command : all) {
      if (command.getCommandName().equals("help")) {
        continue;
      }
      List<String> args = new ArrayList<>(List.of(command.getCommandSpec().qualifiedName(" ").split(" ")));
      args.remove(0); // the jar's own name
      args.add("--help");
      Cli.Result result = Cli.run(args.toArray(String[]::new));
      assertThat(result.exitCode()).as(String.join(" ", args) + ": " + result.err()).isZero();
      assertThat(result.out()).as(String.join(" ", args)).startsWith("Usage: shine-server");
    }
  }

  @Test
  @DisplayName("the test bench (bench, chaos, soak) is not a command of the product: it is shine-tools.jar's")
  void noTestBench() {
    for (String tool : new String[] {"bench", "chaos", "soak"}) {
      Cli.Result result = Cli.run(tool);
      assertThat(result.exitCode()).as(tool).isEqualTo(2);
      assertThat(result.err()).as(tool).contains("Unmatched argument");
    }
    assertThat(Cli.run("--help").out()).doesNotContain("bench", "chaos", "soak");
  }

  @Test
  @DisplayName("a mistyped command or option is refused with exit code 2 and the nearest name suggested")
  void suggestions() {
    Cli.Result command = Cli.run("clinet", "send");
    assertThat(command.exitCode()).isEqualTo(2);
    assertThat(command.err()).contains("Did you mean: shine-server client");

    Cli.Result sub = Cli.run("client", "hsitory");
    assertThat(sub.err()).contains("Did you mean: client history");

    // two letters swapped are one edit: "sned" is "send", not "edit" (which shares a letter pair with it)
    Cli.Result swapped = Cli.run("client", "sned");
    assertThat(swapped.exitCode()).isEqualTo(2);
    assertThat(swapped.err()).contains("Did you mean: client send?").doesNotContain("edit");

    Cli.Result option = Cli.run("client", "send", "--key", "k", "--server", "ws://h/ws", "--to", "bob", "--txt", "x");
    assertThat(option.exitCode()).isEqualTo(2);
    assertThat(option.err()).contains("Unknown option: '--txt'", "Did you mean: --text?",
        "see: java -jar shine-server.jar client send --help");

    Cli.Result noSubcommand = Cli.run("client");
    assertThat(noSubcommand.exitCode()).isEqualTo(2);
    assertThat(noSubcommand.err()).contains("commands: register, send, history, listen, edit, read, delete,"
        + " settings, keys, chat");

    Cli.Result missing = Cli.run("server");
    assertThat(missing.exitCode()).isEqualTo(2);
    assertThat(missing.err()).contains("Missing required option: '--config=FILE.json'");
  }

  @Test
  @DisplayName("a config error is one line with exit code 2")
  void configError() throws Exception {
    var file = java.nio.file.Files.createTempFile("bad", ".json");
    java.nio.file.Files.writeString(file, "{\"serverLogin\": \"s1\", \"noSuchKey\": 1}");
    Cli.Result result = Cli.run("server", "--config", file.toString());
    assertThat(result.exitCode()).isEqualTo(2);
    assertThat(result.err()).startsWith("config error: ").contains("noSuchKey");
    assertThat(result.err().lines().count()).isEqualTo(1);
  }

  @Test
  @DisplayName("keygen refuses to overwrite a key in one line, exit code 1")
  void keygenRefuses() throws Exception {
    var file = java.nio.file.Files.createTempDirectory("keys").resolve("a.key");
    assertThat(Cli.run("keygen", "--out", file.toString(), "--login", "alice").exitCode()).isZero();
    Cli.Result again = Cli.run("keygen", "--out", file.toString(), "--login", "alice");
    assertThat(again.exitCode()).isEqualTo(1);
    assertThat(again.err()).contains("exists; refusing to overwrite a key");
    assertThat(Cli.run("keygen", "--out", file + "2", "--login", "Not Valid").exitCode()).isEqualTo(2);
  }

  @Test
  @DisplayName("client keys lists its steps, each with its own --help")
  void keysHelp() {
    Cli.Result keys = Cli.run("client", "keys", "--help");
    assertThat(keys.exitCode()).isZero();
    assertThat(keys.out()).contains("list", "transfer-key", "add", "receive", "remove", "rotate", "revoke",
        "recovery", "recover", "trust");
    for (String step : List.of("list", "transfer-key", "add", "receive", "remove", "rotate", "revoke", "recovery",
        "recover", "trust")) {
      Cli.Result help = Cli.run("client", "keys", step, "--help");
      assertThat(help.exitCode()).as(step).isZero();
      assertThat(help.out()).as(step).contains("Usage:");
    }
  }

  @Test
  @DisplayName("generate-completion prints picocli's bash/zsh completion script for every command")
  void completion() {
    Cli.Result script = Cli.run("generate-completion");
    assertThat(script.exitCode()).isZero();
    assertThat(script.out()).contains("complete -F _complete_shine-server", "chat", "settings", "--peer");
  }

  @Test
  @DisplayName("the ticks: a read receipt outranks the delivery state, a late accepted never takes a final state back")
  void ticks() {
    assertThat(Tick.of("accepted", true)).isEqualTo(Tick.READ);
    assertThat(Tick.of("failed", false)).isEqualTo(Tick.FAILED);
    assertThat(Tick.READ.then(Tick.DELIVERED)).isEqualTo(Tick.READ);
    assertThat(Tick.DELIVERED.then(Tick.ACCEPTED)).isEqualTo(Tick.DELIVERED);
    assertThat(Tick.ACCEPTED.then(Tick.DELIVERED)).isEqualTo(Tick.DELIVERED);
    assertThat(Tick.FAILED.then(Tick.READ)).isEqualTo(Tick.READ);
    assertThat(Tick.ACCEPTED.render(false)).isEqualTo("[✓ accepted]");
    assertThat(Tick.FAILED.render(false)).isEqualTo("[! not delivered]");
    assertThat(Tick.FAILED.render(true)).isEqualTo("\u001b[31m! not delivered\u001b[0m");
  }

  /** The command tree, the root and every command under it. */
  private static List<CommandLine> allCommands() {
    CommandLine root = ShineCli.commandLine(new CliContext(InputStream.nullInputStream(),
        new PrintStream(OutputStream.nullOutputStream()), new PrintStream(OutputStream.nullOutputStream()), Map.of(),
        false));
    List<CommandLine> all = new ArrayList<>(List.of(root));
    for (int i = 0; i < all.size(); i++) {
      all.addAll(all.get(i).getSubcommands().values());
    }
    return all;
  }
}
