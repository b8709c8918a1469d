package org.shine.server.dm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KeyFileTest {

  @Test
  @DisplayName("keygen writes the private key readable by its owner only, and reads back the same key")
  void writesOwnerOnlyAndRoundTrips(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("keys/alice.key");
    KeyFile key = KeyFile.generate("alice");

    key.write(file);
    KeyFile read = KeyFile.read(file);

    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
    assertThat(read.privateKey()).isEqualTo(key.privateKey());
    assertThat(read.publicKey()).isEqualTo(key.publicKey());
    assertThat(read.login()).contains("alice");
  }

  @Test
  @DisplayName("keygen never overwrites an existing key file")
  void refusesToOverwrite(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("bob.key");
    KeyFile.generate("bob").write(file);
    byte[] before = Files.readAllBytes(file);

    assertThatThrownBy(() -> KeyFile.generate("bob").write(file)).isInstanceOf(FileAlreadyExistsException.class);
    assertThat(Files.readAllBytes(file)).isEqualTo(before);
  }
}
