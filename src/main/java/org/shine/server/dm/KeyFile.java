package org.shine.server.dm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;
import java.util.Optional;
import org.shine.server.util.Json;

/** An Ed25519 key pair on disk as JSON ({@code publicKeyB64}, {@code privateKeyB64}, optional {@code login}). */
public record KeyFile(Optional<String> login, byte[] publicKey, byte[] privateKey) {

  public static KeyFile generate(String login) {
    Ed25519Signer.KeyPair pair = Ed25519Signer.generate();
    return new KeyFile(Optional.ofNullable(login), pair.publicKey(), pair.privateKey());
  }

  public String publicKeyB64() {
    return Base64.getEncoder().encodeToString(publicKey);
  }

  /** Writes the key readable by its owner only (mode 600); refuses to overwrite an existing file. */
  public void write(Path file) throws IOException {
    ObjectNode node = Json.MAPPER.createObjectNode();
    login.ifPresent(l -> node.put("login", l));
    node.put("publicKeyB64", publicKeyB64());
    node.put("privateKeyB64", Base64.getEncoder().encodeToString(privateKey));
    Path absolute = file.toAbsolutePath();
    if (absolute.getParent() != null) {
      Files.createDirectories(absolute.getParent());
    }
    try {
      Files.createFile(absolute, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } catch (UnsupportedOperationException e) {
      Files.createFile(absolute);
    }
    Files.writeString(absolute, Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(node) + "\n");
  }

  public static KeyFile read(Path file) throws IOException {
    JsonNode node = Json.MAPPER.readTree(Files.readString(file));
    byte[] privateKey = Base64.getDecoder().decode(node.path("privateKeyB64").asText());
    byte[] publicKey = Ed25519Signer.publicKeyOf(privateKey);
    String login = node.hasNonNull("login") ? node.get("login").asText() : null;
    return new KeyFile(Optional.ofNullable(login), publicKey, privateKey);
  }
}
