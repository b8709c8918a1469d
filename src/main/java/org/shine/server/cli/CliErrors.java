package org.shine.server.cli;

import java.io.PrintWriter;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.shine.server.client.ShineClientException;
import org.shine.server.config.ConfigException;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/** One line on stderr and a documented exit code for every failure of a command; never a stack trace. */
final class CliErrors {
  private CliErrors() {
  }

  /** A failure while a command ran. */
  static int onExecution(Exception failure, CommandLine command, ParseResult parsed) {
    CliFailure reported = classify(failure);
    command.getErr().println((failure instanceof ConfigException ? "config error: " : "error: ")
        + reported.getMessage());
    return reported.exitCode();
  }

  /** A command line that does not parse: the problem, picocli's suggestions for a typo, where the help is. */
  static int onParameters(CommandLine.ParameterException problem, String[] args) {
    CommandLine command = problem.getCommandLine();
    PrintWriter err = command.getErr();
    String unknown = unknownOption(command, args);
    if (unknown != null && !(problem instanceof CommandLine.UnmatchedArgumentException)) {
      // a typo in an option name explains a "missing required option" better than the missing option itself
      problem = new CommandLine.UnmatchedArgumentException(command, List.of(unknown));
    }
    err.println("error: " + problem.getMessage());
    Optional<String> nearCommand = problem instanceof CommandLine.UnmatchedArgumentException unmatched
        ? similarCommand(command, unmatched.getUnmatched()) : Optional.empty();
    if (nearCommand.isPresent()) {
      err.println("Did you mean: " + command.getCommandName() + " " + nearCommand.get() + "?");
    } else if (problem instanceof CommandLine.UnmatchedArgumentException unmatched
        && unmatched.getSuggestions().isEmpty() && unknown != null) {
      similarOption(command, unknown).ifPresent(name -> err.println("Did you mean: " + name + "?"));
    } else {
      CommandLine.UnmatchedArgumentException.printSuggestions(problem, err);
    }
    if (!command.getSubcommands().isEmpty() && !(problem instanceof CommandLine.UnmatchedArgumentException)) {
      err.println("commands: " + String.join(", ", command.getSubcommands().keySet()));
    }
    err.println("see: java -jar " + rootOf(command).getCommandName() + ".jar " + qualifiedName(command) + "--help");
    return CliFailure.USAGE;
  }

  /** The exit code and line for any failure. */
  static CliFailure classify(Throwable failure) {
    if (failure instanceof CliFailure known) {
      return known;
    }
    if (failure instanceof ConfigException config) {
      return CliFailure.usage(config.getMessage());
    }
    if (failure instanceof ShineClientException answer) {
      return fromServer(answer);
    }
    if (failure instanceof java.net.ConnectException || failure instanceof java.nio.channels.ClosedChannelException
        || failure instanceof io.vertx.core.http.HttpClosedException) {
      return new CliFailure(CliFailure.UNREACHABLE, "the connection to the server failed: " + describe(failure));
    }
    return new CliFailure(CliFailure.FAILED, describe(failure));
  }

  /** An error answer of a server (status 0: the connection closed before the answer). */
  static CliFailure fromServer(ShineClientException answer) {
    String text = answer.status() == 0 ? "the connection to the server was lost before it answered"
        : "the server answered " + answer.status() + " " + answer.code() + messageOf(answer) + hint(answer.code());
    int code = switch (answer.status()) {
      case 0 -> CliFailure.UNREACHABLE;
      case 401, 421 -> CliFailure.LOGIN_REFUSED;
      case 404 -> CliFailure.NOT_FOUND;
      default -> CliFailure.FAILED;
    };
    return new CliFailure(code, text);
  }

  /** What to do about a refusal whose cure is not in the message itself. */
  private static String hint(String code) {
    return switch (code) {
      case "ROUTE_NAME" -> " (that server is not a configured peer of this one: it must be named after its URL's"
          + " host, or this server's operator lists it in peers)";
      case "ROUTE_NOT_ALLOWED" -> " (the server's egress policy does not let it dial that address)";
      default -> "";
    };
  }

  /** A throwable's message, or its class name when it has none (no "error: null"). */
  static String describe(Throwable failure) {
    String message = failure.getMessage();
    if (message == null || message.isBlank()) {
      Throwable cause = failure.getCause();
      return cause != null && cause != failure ? describe(cause) : failure.getClass().getSimpleName();
    }
    return message;
  }

  private static String messageOf(ShineClientException answer) {
    String full = answer.getMessage();
    int colon = full.indexOf(": ");
    String message = colon < 0 ? "" : full.substring(colon + 2);
    return message.isBlank() ? "" : ": " + message;
  }

  /** The first {@code --name} among {@code args} that {@code command} does not know, or null. */
  private static String unknownOption(CommandLine command, String[] args) {
    for (String arg : args) {
      if (arg.startsWith("--") && arg.length() > 2) {
        String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
        if (!command.getCommandSpec().optionsMap().containsKey(name)) {
          return name;
        }
      }
    }
    return null;
  }

  /**
   * The option of {@code command} nearest to a mistyped one (at most two edits away): picocli suggests options only
   * by their first letters, so {@code --txt} would get no hint for {@code --text}.
   */
  private static Optional<String> similarOption(CommandLine command, String typed) {
    return command.getCommandSpec().optionsMap().keySet().stream().filter(name -> name.startsWith("--"))
        .filter(name -> distance(name, typed) <= 2).min(Comparator.comparingInt(name -> distance(name, typed)));
  }

  /**
   * The subcommand of {@code command} nearest to a mistyped first word (at most two edits away, a swap of two
   * neighbours counting as one): picocli ranks by shared letter pairs, so {@code sned} would be offered {@code edit}
   * rather than {@code send}.
   */
  private static Optional<String> similarCommand(CommandLine command, List<String> unmatched) {
    if (unmatched.isEmpty() || unmatched.get(0).startsWith("-") || command.getSubcommands().isEmpty()) {
      return Optional.empty();
    }
    String typed = unmatched.get(0);
    return command.getSubcommands().keySet().stream().filter(name -> distance(name, typed) <= 2)
        .min(Comparator.comparingInt((String name) -> distance(name, typed)).thenComparing(Comparator.naturalOrder()));
  }

  /** Edits between two words: insertions, deletions, substitutions and swaps of neighbours (optimal alignment). */
  private static int distance(String a, String b) {
    int[][] d = new int[a.length() + 1][b.length() + 1];
    for (int i = 0; i <= a.length(); i++) {
      d[i][0] = i;
    }
    for (int j = 0; j <= b.length(); j++) {
      d[0][j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        d[i][j] = Math.min(d[i - 1][j - 1] + cost, Math.min(d[i - 1][j], d[i][j - 1]) + 1);
        if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
          d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.length()][b.length()];
  }

  private static CommandLine rootOf(CommandLine command) {
    CommandLine root = command;
    while (root.getParent() != null) {
      root = root.getParent();
    }
    return root;
  }

  private static String qualifiedName(CommandLine command) {
    StringBuilder names = new StringBuilder();
    for (CommandLine c = command; c.getParent() != null; c = c.getParent()) {
      names.insert(0, c.getCommandName() + " ");
    }
    return names.toString();
  }
}
