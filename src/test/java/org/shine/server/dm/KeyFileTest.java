package org.shine.server.dm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shine.server.util.Json;

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

  @Test
  @DisplayName("format 2 keeps the encryption keys, newest first; a format 1 file is read with none")
  void encryptionKeys(@TempDir Path dir) throws Exception {
    KeyFile key = KeyFile.generate("carol");
    Hpke.KeyPair newer = Hpke.generateKeyPair();
    KeyFile rotated = key.withCurrentEncryptionKey(newer, List.of(key.encryptionKey().orElseThrow()));
    Path file = dir.resolve("carol.key");
    rotated.write(file);
    Path old = dir.resolve("old.key");
    Files.writeString(old, "{\"login\":\"dan\",\"publicKeyB64\":\"" + key.publicKeyB64() + "\",\"privateKeyB64\":\""
        + Base64.getEncoder().encodeToString(key.privateKey()) + "\"}");

    KeyFile read = KeyFile.read(file);

    assertThat(Json.MAPPER.readTree(Files.readString(file)).get("format").asInt()).isEqualTo(2);
    assertThat(read.encryptionKeys()).hasSize(2);
    assertThat(read.encryptionKey().orElseThrow().publicKey()).isEqualTo(newer.publicKey());
    assertThat(read.encryptionKeys().get(1).privateKey()).isEqualTo(key.encryptionKey().orElseThrow().privateKey());
    KeyFile formatOne = KeyFile.read(old);
    assertThat(formatOne.encryptionKeys()).isEmpty();
    assertThat(formatOne.publicKey()).isEqualTo(key.publicKey());
  }

  @Test
  @DisplayName("replace swaps the whole file, owner-only; a newer format or a file that is no key is refused")
  void replaceAndRefusals(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("erin.key");
    KeyFile key = KeyFile.generate("erin");
    key.write(file);
    KeyFile more = key.withCurrentEncryptionKey(Hpke.generateKeyPair(), List.of());

    more.replace(file);

    assertThat(KeyFile.read(file).encryptionKeys()).hasSize(2);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
    assertThat(Files.exists(dir.resolve("erin.key.new"))).isFalse();
    Path future = dir.resolve("future.key");
    Files.writeString(future, "{\"format\":3,\"privateKeyB64\":\"\"}");
    assertThatThrownBy(() -> KeyFile.read(future)).isInstanceOf(java.io.IOException.class)
        .hasMessageContaining("format 3");
    Path junk = dir.resolve("junk.key");
    Files.writeString(junk, "{\"privateKeyB64\":\"AAAA\"}");
    assertThatThrownBy(() -> KeyFile.read(junk)).isInstanceOf(java.io.IOException.class)
        .hasMessageContaining("not a key file");
  }
}
