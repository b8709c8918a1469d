package org.shine.server.dm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import org.shine.server.util.Json;

/**
 * A device's keys on disk as JSON: its Ed25519 key pair ({@code publicKeyB64}, {@code privateKeyB64}), optional
 * {@code login}, and — file format 2 — the user's X25519 encryption keys ({@code encryptionKeys}: newest first, the
 * first is the current one; older ones stay to read older messages, PROTOCOL §4 v3). A format 1 file (no
 * {@code format}) has no encryption key and is still read.
 */
public record KeyFile(Optional<String> login, byte[] publicKey, byte[] privateKey, List<Hpke.KeyPair> encryptionKeys) {
  /** The file format this class writes. */
  public static final int FORMAT = 2;

  public KeyFile {
    encryptionKeys = List.copyOf(encryptionKeys);
  }

  /** A device key without encryption keys (a format 1 file, a server key). */
  public KeyFile(Optional<String> login, byte[] publicKey, byte[] privateKey) {
    this(login, publicKey, privateKey, List.of());
  }

  /** A new device key with a new encryption key of its own (used when this device is the user's first). */
  public static KeyFile generate(String login) {
    Ed25519Signer.KeyPair pair = Ed25519Signer.generate();
    return new KeyFile(Optional.ofNullable(login), pair.publicKey(), pair.privateKey(),
        List.of(Hpke.generateKeyPair()));
  }

  public String publicKeyB64() {
    return Base64.getEncoder().encodeToString(publicKey);
  }

  /** The current encryption key (the newest), if the file holds one. */
  public Optional<Hpke.KeyPair> encryptionKey() {
    return encryptionKeys.isEmpty() ? Optional.empty() : Optional.of(encryptionKeys.get(0));
  }

  /** The same device key with {@code keys} as its encryption keys (newest first). */
  public KeyFile withEncryptionKeys(List<Hpke.KeyPair> keys) {
    return new KeyFile(login, publicKey, privateKey, keys);
  }

  /**
   * The same device key holding {@code current} first and every encryption key it held or {@code received} holds
   * after it (each once): what a device keeps after a rotation or a key transfer.
   */
  public KeyFile withCurrentEncryptionKey(Hpke.KeyPair current, List<Hpke.KeyPair> received) {
    List<Hpke.KeyPair> keys = new ArrayList<>();
    keys.add(current);
    for (List<Hpke.KeyPair> source : List.of(received, encryptionKeys)) {
      for (Hpke.KeyPair key : source) {
        if (keys.stream().noneMatch(kept -> Arrays.equals(kept.publicKey(), key.publicKey()))) {
          keys.add(key);
        }
      }
    }
    return withEncryptionKeys(keys);
  }

  /** Writes the key readable by its owner only (mode 600); refuses to overwrite an existing file. */
  public void write(Path file) throws IOException {
    Path absolute = file.toAbsolutePath();
    if (absolute.getParent() != null) {
      Files.createDirectories(absolute.getParent());
    }
    createOwnerOnly(absolute);
    Files.writeString(absolute, text());
  }

  /**
   * Replaces an existing key file with these keys (a rotation, a key transfer), through a file of mode 600 moved over
   * it, so that a crash leaves the old file or the new one, never half of one.
   */
  public void replace(Path file) throws IOException {
    Path absolute = file.toAbsolutePath();
    Path next = absolute.resolveSibling(absolute.getFileName() + ".new");
    Files.deleteIfExists(next);
    createOwnerOnly(next);
    Files.writeString(next, text());
    Files.move(next, absolute, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private String text() throws IOException {
    Base64.Encoder base64 = Base64.getEncoder();
    ObjectNode node = Json.MAPPER.createObjectNode();
    node.put("format", FORMAT);
    login.ifPresent(l -> node.put("login", l));
    node.put("publicKeyB64", publicKeyB64());
    node.put("privateKeyB64", base64.encodeToString(privateKey));
    ArrayNode keys = node.putArray("encryptionKeys");
    encryptionKeys.forEach(key -> keys.addObject().put("publicKeyB64", base64.encodeToString(key.publicKey()))
        .put("privateKeyB64", base64.encodeToString(key.privateKey())));
    return Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(node) + "\n";
  }

  private static void createOwnerOnly(Path absolute) throws IOException {
    try {
      Files.createFile(absolute, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } catch (UnsupportedOperationException e) {
      Files.createFile(absolute);
    }
  }

  /** Reads a format 1 or 2 file; public keys are derived from the private ones (a file's own are not trusted). */
  public static KeyFile read(Path file) throws IOException {
    JsonNode node = Json.MAPPER.readTree(Files.readString(file));
    if (node == null || !node.isObject()) {
      throw new IOException(file + " is not a key file (not a JSON object)");
    }
    int format = node.path("format").asInt(1);
    if (format > FORMAT) {
      throw new IOException(file + " is a key file of format " + format + ", newer than this program reads ("
          + FORMAT + ")");
    }
    try {
      byte[] privateKey = Base64.getDecoder().decode(node.path("privateKeyB64").asText());
      byte[] publicKey = Ed25519Signer.publicKeyOf(privateKey);
      String login = node.hasNonNull("login") ? node.get("login").asText() : null;
      List<Hpke.KeyPair> keys = new ArrayList<>();
      for (JsonNode key : node.path("encryptionKeys")) {
        byte[] encryptionPrivate = Base64.getDecoder().decode(key.path("privateKeyB64").asText());
        keys.add(new Hpke.KeyPair(encryptionPrivate, Hpke.publicKeyOf(encryptionPrivate)));
      }
      return new KeyFile(Optional.ofNullable(login), publicKey, privateKey, keys);
    } catch (IllegalArgumentException e) {
      throw new IOException(file + " is not a key file: " + e.getMessage(), e);
    }
  }
}
