package org.shine.server.cli;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import java.util.Set;
import org.shine.server.dm.KeyFile;
import org.shine.server.dm.Logins;

/** {@code keygen --out FILE [--login LOGIN]}: a new Ed25519 key pair, private file mode 600. */
public final class KeygenCommand {
  private KeygenCommand() {
  }

  public static int run(String[] args) {
    Args options = Args.parse(args, 0, Set.of("out", "login"));
    Path out = Path.of(options.required("out"));
    String login = options.optional("login", null);
    if (login != null && !Logins.isValid(login)) {
      throw new Args.UsageException("--login must match [a-z0-9_.-]{1,32}");
    }
    KeyFile key = KeyFile.generate(login);
    try {
      key.write(out);
    } catch (FileAlreadyExistsException e) {
      System.err.println("error: " + out + " exists; refusing to overwrite a key");
      return 1;
    } catch (IOException e) {
      System.err.println("error: cannot write " + out + ": " + e.getMessage());
      return 1;
    }
    System.out.println("wrote " + out + " (public key " + key.publicKeyB64() + ")");
    return 0;
  }
}
