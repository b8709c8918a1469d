package org.shine.server;

import org.shine.server.cli.CliContext;
import org.shine.server.cli.ShineCli;

/** Entry point of the fat jar: runs the command line ({@link ShineCli}) and exits with its code. */
public final class Main {
  private Main() {
  }

  public static void main(String[] args) {
    System.exit(ShineCli.execute(CliContext.system(), args));
  }
}
