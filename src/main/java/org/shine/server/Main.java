package org.shine.server;

import java.util.Set;
import org.shine.server.cli.CliContext;
import org.shine.server.cli.ShineCli;

/** Entry point of the fat jar: runs the command line ({@link ShineCli}) and exits with its code. */
public final class Main {
  private Main() {
  }

  /** Commands that run as services and log what they do; the others talk to a person. */
  private static final Set<String> SERVICES = Set.of("server", "adapter");

  public static void main(String[] args) {
    if (args.length == 0 || !SERVICES.contains(args[0])) {
      quietLogs();
    }
    System.exit(ShineCli.execute(CliContext.system(), args));
  }

  /**
   * A person's command ({@code client chat}, {@code admin}, ...) shows its own output: the libraries' and the
   * client's log lines are warnings only, on standard error, unless {@code SHINE_LOG_LEVEL} asks for more. Set
   * before the first logger is made (logback.xml reads both properties).
   */
  private static void quietLogs() {
    if (System.getenv("SHINE_LOG_LEVEL") == null) {
      System.setProperty("SHINE_LOG_LEVEL", "WARN");
    }
    System.setProperty("SHINE_LOG_TARGET", "System.err");
  }
}
