package org.shine.tools;

import java.util.concurrent.Callable;
import org.shine.server.cli.CliContext;
import org.shine.server.cli.CliFailure;
import org.shine.server.cli.ShineCli;
import org.shine.tools.bench.BenchCommand;
import org.shine.tools.chaos.ChaosCommand;
import org.shine.tools.soak.SoakCommand;
import org.shine.tools.vectors.HpkeVectorsCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The command line of the test bench ({@code shine-tools.jar}): benchmarks, the fault suite's parts, the soak's
 * load generator and the Java side of the encrypted bodies' cross-check, apart from the product's own command line
 * ({@link ShineCli}), whose wiring (streams, context, errors and exit codes) it shares. A subcommand is one entry in
 * {@code subcommands} below.
 */
@Command(name = "shine-tools", mixinStandardHelpOptions = true, versionProvider = ToolsCli.Version.class,
    description = "The SHiNE DM server's test bench (run as: java -jar shine-tools.jar COMMAND ...).",
    subcommands = {
        BenchCommand.class,
        ChaosCommand.class,
        SoakCommand.class,
        HpkeVectorsCommand.class,
        HelpCommand.class,
    },
    footer = {"", "Exit codes: 0 ok, 1 failed (or a loss, a duplicate, a leak), 2 usage error,",
        "3 server unreachable."})
public final class ToolsCli implements Callable<Integer> {
  @Spec
  private CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return CliFailure.USAGE;
  }

  /** Runs the command line in {@code context} and answers the exit code (never exits the JVM itself). */
  public static int execute(CliContext context, String... args) {
    return commandLine(context).execute(args);
  }

  /** The command tree wired to {@code context} as the product's is. */
  public static CommandLine commandLine(CliContext context) {
    return ShineCli.wire(new ToolsCli(), context);
  }

  /** The jar's version from its manifest (none when run from classes). */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String version = ToolsCli.class.getPackage().getImplementationVersion();
      return new String[] {"shine-tools " + (version == null ? "(development build)" : version)};
    }
  }
}
