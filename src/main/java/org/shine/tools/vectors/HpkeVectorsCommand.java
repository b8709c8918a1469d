package org.shine.tools.vectors;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.shine.server.cli.CliContext;
import org.shine.server.cli.CliFailure;
import org.shine.server.util.Json;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Parameters;

/**
 * {@code hpke-vectors}: the Java side of the cross-check of encrypted bodies ({@link HpkeVectors}). {@code write}
 * seals fresh bodies for the browser's code to open; {@code check} opens bodies the browser's code sealed.
 * {@code web-tests/hpke.test.mjs} runs both against fresh JS output on every run.
 */
@Command(name = "hpke-vectors", mixinStandardHelpOptions = true,
    description = "Encrypted bodies sealed here for the web chat's hpke.js, and the check of those it sealed.",
    subcommands = {HpkeVectorsCommand.Write.class, HpkeVectorsCommand.Check.class, HelpCommand.class})
public final class HpkeVectorsCommand {
  private HpkeVectorsCommand() {
  }

  @Command(name = "write", mixinStandardHelpOptions = true,
      description = "Write fresh bodies and a key transfer sealed by dm.BodyCipher, with their keys, to FILE.")
  static final class Write implements Callable<Integer> {
    @Parameters(paramLabel = "FILE", description = "the JSON file to write (replaced)")
    Path file;

    @Override
    public Integer call() throws IOException {
      Path absolute = file.toAbsolutePath();
      Files.createDirectories(absolute.getParent());
      Files.writeString(absolute, Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(
          HpkeVectors.write()) + "\n");
      return 0;
    }
  }

  @Command(name = "check", mixinStandardHelpOptions = true,
      description = "Open every body and key transfer of FILE with dm.BodyCipher; exit 1 when one does not open to"
          + " its plaintext, naming it.")
  static final class Check implements Callable<Integer> {
    @Parameters(paramLabel = "FILE", description = "a file hpke-vectors.mjs (or write) wrote")
    Path file;

    private final CliContext context;

    Check(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      JsonNode vectors;
      try {
        vectors = Json.MAPPER.readTree(Files.readString(file));
      } catch (IOException e) {
        throw new CliFailure(CliFailure.FAILED, "cannot read " + file + ": " + e.getMessage());
      }
      List<String> problems = HpkeVectors.check(vectors);
      if (!problems.isEmpty()) {
        problems.forEach(problem -> context.err().println(file + ": " + problem));
        return CliFailure.FAILED;
      }
      context.out().println(file + ": all open (bodies: " + vectors.path("bodies").size() + ", key transfers: "
          + vectors.path("keyTransfers").size() + ")");
      return 0;
    }
  }
}
