package org.shine.server;

import java.util.Arrays;
import org.shine.server.cli.AdapterCommand;
import org.shine.server.cli.AdminCommand;
import org.shine.server.cli.Args;
import org.shine.server.cli.BenchCommand;
import org.shine.server.cli.ClientCommand;
import org.shine.server.cli.KeygenCommand;
import org.shine.server.cli.ServerCommand;
import org.shine.server.cli.SoakCommand;
import org.shine.server.config.ConfigException;

/** Entry point of the fat jar: {@code server}, {@code keygen}, {@code client} and {@code bench} subcommands. */
public final class Main {
  static final String USAGE = String.join("\n",
      "usage: java -jar shine-server.jar <command> [options]",
      "  server --config FILE.json            run an access server (PROTOCOL §11)",
      "  keygen --out FILE [--login LOGIN]    write a new Ed25519 key pair (mode 600)",
      "  client <register|send|history|listen> --key FILE --server URL [...]",
      "                                       a small WebSocket client; 'client help' lists the options",
      "  bench <codec|send|retry-claim|catchup> [...]   benchmarks; 'bench help' lists the options",
      "  adapter <run|dead|retry-dead> [...]  the reference hub adapter; 'adapter help' lists the options",
      "  admin <peers|deliveries|retry-peer|user> --config FILE [--json]",
      "                                       a node's admin API; 'admin --help' lists the options",
      "  soak --server sN=URL (x4) --run-dir DIR [...]   mixed load with restarts (scripts/soak.sh); 'soak help'");

  private Main() {
  }

  public static void main(String[] args) {
    if (args.length == 0 || args[0].equals("help") || args[0].equals("--help")) {
      System.out.println(USAGE);
      System.exit(args.length == 0 ? 2 : 0);
    }
    String[] rest = Arrays.copyOfRange(args, 1, args.length);
    try {
      int code = switch (args[0]) {
        case "server" -> ServerCommand.run(rest);
        case "keygen" -> KeygenCommand.run(rest);
        case "client" -> ClientCommand.run(rest);
        case "bench" -> BenchCommand.run(rest);
        case "adapter" -> AdapterCommand.run(rest);
        case "admin" -> AdminCommand.run(rest);
        case "soak" -> SoakCommand.run(rest);
        default -> throw new Args.UsageException("unknown command " + args[0]);
      };
      System.exit(code);
    } catch (Args.UsageException e) {
      System.err.println("error: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
    } catch (ConfigException e) {
      System.err.println("config error: " + e.getMessage());
      System.exit(2);
    } catch (Exception e) {
      System.err.println("error: " + e.getMessage());
      System.exit(1);
    }
  }
}
