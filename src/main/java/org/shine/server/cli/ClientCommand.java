package org.shine.server.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;

/**
 * {@code client ...}: a user's WebSocket client from the shell, readable by default, {@code --json} for scripts. Each
 * subcommand is its own class; those that log in extend {@link UserCommand} and share {@link UserOptions}.
 */
@Command(name = "client", mixinStandardHelpOptions = true,
    description = "A user's client of an access server: register, send, read, edit, delete, settings, keys, chat.",
    subcommands = {
        ClientRegister.class,
        ClientSend.class,
        ClientHistory.class,
        ClientListen.class,
        ClientEdit.class,
        ClientRead.class,
        ClientDelete.class,
        ClientSettings.class,
        ClientKeys.class,
        ChatCommand.class,
        HelpCommand.class,
    })
final class ClientCommand {
  private ClientCommand() {
  }
}
