package org.shine.server.cli;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.shine.server.dm.KeyFile;
import org.shine.server.dm.Logins;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code keygen --out FILE [--login LOGIN]}: a new device key file (format 2, mode 600): an Ed25519 device key and an
 * X25519 encryption key.
 */
@Command(name = "keygen", mixinStandardHelpOptions = true,
    description = "Write a new device key file to FILE (mode 600): an Ed25519 device key and an X25519 encryption"
        + " key; an existing file is never overwritten.")
final class KeygenCommand implements Callable<Integer> {
  @Option(names = "--out", required = true, paramLabel = "FILE", description = "the key file to create")
  private Path out;

  @Option(names = "--login", paramLabel = "LOGIN",
      description = "the user the key belongs to (stored in the file, so other commands need no --login)")
  private String login;

  private final CliContext context;

  KeygenCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    if (login != null && !Logins.isValid(login)) {
      throw CliFailure.usage("--login must match [a-z0-9_.-]{1,32}");
    }
    KeyFile key = KeyFile.generate(login);
    try {
      key.write(out);
    } catch (FileAlreadyExistsException e) {
      throw new CliFailure(CliFailure.FAILED, out + " exists; refusing to overwrite a key (use another --out,"
          + " or keep using that key)");
    } catch (IOException e) {
      throw new CliFailure(CliFailure.FAILED, "cannot write " + out + ": " + CliErrors.describe(e));
    }
    context.out().println("wrote " + out + " (device key " + key.publicKeyB64() + "; the file also holds an"
        + " encryption key for end-to-end encrypted messages)");
    return 0;
  }
}
