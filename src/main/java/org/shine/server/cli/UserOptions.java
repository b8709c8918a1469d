package org.shine.server.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The options every {@code client} subcommand that logs in takes (a picocli mixin of {@link UserCommand}). */
final class UserOptions {
  @Option(names = "--key", required = true, paramLabel = "FILE", description = "the user's key file (keygen)")
  Path keyFile;

  @Option(names = "--login", paramLabel = "LOGIN", description = "the user (default: the login in the key file)")
  String login;

  @Option(names = "--server", required = true, paramLabel = "URL",
      description = "one of the user's access servers, e.g. ws://127.0.0.1:7101/ws")
  String server;

  @Option(names = "--json", description = "one JSON object per line instead of readable text (for scripts)")
  boolean json;
}
