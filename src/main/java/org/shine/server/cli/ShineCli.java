package org.shine.server.cli;

import java.lang.reflect.Constructor;
import java.util.Objects;
import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The command line of the product's jar. A subcommand is a picocli {@code @Command} class and one entry in {@code
 * subcommands} below; a class with a {@code (CliContext)} constructor gets the context (streams, terminal, stop
 * signal), any other is made by picocli's default factory. Errors are reported by {@link CliErrors}. The test
 * bench (bench, chaos, soak) is not here: it is the tools' own command line in {@code shine-tools.jar}, which
 * wires its tree with {@link #wire}.
 */
@Command(name = "shine-server", mixinStandardHelpOptions = true, versionProvider = ShineCli.Version.class,
    description = "SHiNE DM access server (run as: java -jar shine-server.jar COMMAND ...).",
    subcommands = {
        ServerCommand.class,
        KeygenCommand.class,
        ClientCommand.class,
        AdapterCommand.class,
        AdminCommand.class,
        AutoComplete.GenerateCompletion.class,
        HelpCommand.class,
    },
    footer = {"", "Exit codes: 0 ok, 1 failed, 2 usage or config error,",
        "3 server unreachable or connection lost, 4 login refused,", "5 unknown user or message, 6 bad key file,",
        "7 a contact's keys changed in a way their devices did not sign."})
public final class ShineCli implements Callable<Integer> {
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

  /** The command tree wired to {@code context}: its streams, its error reporting. */
  public static CommandLine commandLine(CliContext context) {
    CommandLine commandLine = wire(new ShineCli(), context);
    commandLine.getSubcommands().get("generate-completion").getCommandSpec().usageMessage().hidden(false);
    return commandLine;
  }

  /**
   * A command tree with {@code root} at its top, wired as this one is: commands made with {@code context}, its
   * streams, and one line and an exit code for every failure ({@link CliErrors}).
   */
  public static CommandLine wire(Object root, CliContext context) {
    CommandLine commandLine = new CommandLine(root, new ContextFactory(context));
    commandLine.setOut(context.out()).setErr(context.err());
    commandLine.setExecutionExceptionHandler(CliErrors::onExecution);
    commandLine.setParameterExceptionHandler(CliErrors::onParameters);
    return commandLine;
  }

  /** Makes command objects, handing the context to those that take it. */
  private record ContextFactory(CliContext context) implements CommandLine.IFactory {
    ContextFactory {
      Objects.requireNonNull(context);
    }

    @Override
    public <K> K create(Class<K> type) throws Exception {
      Constructor<K> withContext;
      try {
        withContext = type.getDeclaredConstructor(CliContext.class);
      } catch (NoSuchMethodException e) {
        return CommandLine.defaultFactory().create(type);
      }
      withContext.setAccessible(true);
      return withContext.newInstance(context);
    }
  }

  /** The jar's version from its manifest (none when run from classes). */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String version = ShineCli.class.getPackage().getImplementationVersion();
      return new String[] {"shine-server " + (version == null ? "(development build)" : version)};
    }
  }
}
