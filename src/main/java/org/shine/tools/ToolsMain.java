package org.shine.tools;

import org.shine.server.cli.CliContext;

/**
 * Entry point of {@code shine-tools.jar}: runs the test bench's command line ({@link ToolsCli}) and exits with its
 * code.
 */
public final class ToolsMain {
  private ToolsMain() {
  }

  public static void main(String[] args) {
    System.exit(ToolsCli.execute(CliContext.system(), args));
  }
}
