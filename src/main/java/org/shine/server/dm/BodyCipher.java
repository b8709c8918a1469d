package org.shine.server.dm;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.shine.server.util.Json;

/**
 * The end-to-end encrypted body of a message copy (PROTOCOL §4 "v3 encrypted bodies"): the v1 body bytes sealed
 * with {@link Hpke} to the copy's owner's X25519 key and written as UTF-8 JSON
 * {@code {"v":2,"alg":"hpke-x25519-sha256-aes128gcm","kid":K,"encB64":E,"ctB64":C}}. The HPKE {@code info} binds the
 * ciphertext to one copy ({@code SHiNE_DM body|baseKey|kind|revision}), so a body moved to another message, kind or
 * revision does not open. The same envelope carries a user's keys to a new device ({@code SHiNE_KEYS|login|device
 * key}, "Adding a device"). The browser's {@code shine-web/hpke.js} writes and reads the same bytes.
 */
public final class BodyCipher {
  public static final String ALG = "hpke-x25519-sha256-aes128gcm";
  public static final int VERSION = 2;
  private static final int KID_BYTES = 8;
  private static final byte[] NO_AAD = new byte[0];

  private BodyCipher() {
  }

  /** Why a body did not open; {@link #UNKNOWN_KEY} is what a client shows as "cannot decrypt on this device". */
  public enum Failure {
    /** Not an encrypted body (a v1 body, or not JSON at all): the caller reads it as plaintext. */
    NOT_ENCRYPTED,
    /** Encrypted to a key this device does not hold. */
    UNKNOWN_KEY,
    /** Says it is encrypted, but a field is missing or not what it must be. */
    MALFORMED,
    /** None of the device's keys with that kid opens it: altered, or sealed for another message or key. */
    AUTHENTICATION_FAILED
  }

  /** A body that does not open, with the reason. */
  public static final class OpenFailure extends Exception {
    private final Failure failure;

    OpenFailure(Failure failure, String message) {
      super(message, null, false, false);
      this.failure = failure;
    }

    public Failure failure() {
      return failure;
    }
  }

  /** The X25519 private keys a device holds, found by the kid of their public key (old keys included). */
  @FunctionalInterface
  public interface PrivateKeys {
    /** The private keys whose public key has this kid; empty when none. */
    List<byte[]> withKid(String kid);

    /** The lookup over a set of raw private keys. */
    static PrivateKeys of(Collection<byte[]> privateKeys) {
      Map<String, List<byte[]>> byKid = new HashMap<>();
      for (byte[] privateKey : privateKeys) {
        byKid.computeIfAbsent(kid(Hpke.publicKeyOf(privateKey)), k -> new ArrayList<>()).add(privateKey.clone());
      }
      return kid -> byKid.getOrDefault(kid, List.of());
    }
  }

  /** The key id of an X25519 public key: standard base64 of the first 8 bytes of its SHA-256. */
  public static String kid(byte[] publicKey) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(publicKey);
      return Base64.getEncoder().encodeToString(Arrays.copyOf(digest, KID_BYTES));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JDK", e);
    }
  }

  /** Seals a v1 body to the owner of one copy (kind 1: the recipient's key; kind 2: the sender's own key). */
  public static byte[] sealBody(byte[] plaintextBody, byte[] ownerPublicKey, String baseKey, DmKind kind,
      long revision) {
    return seal(plaintextBody, ownerPublicKey, bodyInfo(baseKey, kind, revision));
  }

  /** Opens a body sealed by {@link #sealBody} for the same copy; answers the v1 body bytes. */
  public static byte[] openBody(byte[] body, PrivateKeys keys, String baseKey, DmKind kind, long revision)
      throws OpenFailure {
    return open(body, keys, bodyInfo(baseKey, kind, revision));
  }

  /** Seals whatever the approving device hands a new one (the user's private keys) to the new device's transfer key. */
  public static byte[] sealKeyTransfer(byte[] secret, byte[] transferPublicKey, String login,
      String newDeviceKeyB64) {
    return seal(secret, transferPublicKey, keyTransferInfo(login, newDeviceKeyB64));
  }

  /** Opens what {@link #sealKeyTransfer} sealed for this login and device key. */
  public static byte[] openKeyTransfer(byte[] sealed, PrivateKeys keys, String login, String newDeviceKeyB64)
      throws OpenFailure {
    return open(sealed, keys, keyTransferInfo(login, newDeviceKeyB64));
  }

  /** True when the body is JSON saying it is an encrypted (v2) body, whether or not it then opens here. */
  public static boolean isEncrypted(byte[] body) {
    JsonNode node = parse(body);
    return node != null && isEnvelope(node);
  }

  private static byte[] bodyInfo(String baseKey, DmKind kind, long revision) {
    return utf8("SHiNE_DM body|" + Objects.requireNonNull(baseKey) + '|' + kind.code() + '|' + revision);
  }

  private static byte[] keyTransferInfo(String login, String newDeviceKeyB64) {
    return utf8("SHiNE_KEYS|" + Objects.requireNonNull(login) + '|' + Objects.requireNonNull(newDeviceKeyB64));
  }

  private static byte[] seal(byte[] plaintext, byte[] publicKey, byte[] info) {
    Hpke.Sealed sealed = Hpke.seal(publicKey, info, NO_AAD, Objects.requireNonNull(plaintext));
    Base64.Encoder base64 = Base64.getEncoder();
    ObjectNode node = Json.MAPPER.createObjectNode()
        .put("v", VERSION)
        .put("alg", ALG)
        .put("kid", kid(publicKey))
        .put("encB64", base64.encodeToString(sealed.enc()))
        .put("ctB64", base64.encodeToString(sealed.ciphertext()));
    try {
      return Json.MAPPER.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write a JSON object of strings", e);
    }
  }

  private static byte[] open(byte[] body, PrivateKeys keys, byte[] info) throws OpenFailure {
    JsonNode node = parse(body);
    if (node == null || !isEnvelope(node)) {
      throw new OpenFailure(Failure.NOT_ENCRYPTED, "not an encrypted body (no v " + VERSION + " JSON)");
    }
    if (!ALG.equals(node.path("alg").textValue())) {
      throw malformed("alg " + node.path("alg") + " is not " + ALG);
    }
    String kid = text(node, "kid");
    byte[] enc = base64(node, "encB64");
    byte[] ciphertext = base64(node, "ctB64");
    if (enc.length != Hpke.ENC_SIZE) {
      throw malformed("encB64 is " + enc.length + " bytes, not " + Hpke.ENC_SIZE);
    }
    if (ciphertext.length < Hpke.TAG_SIZE) {
      throw malformed("ctB64 is " + ciphertext.length + " bytes, shorter than the " + Hpke.TAG_SIZE + "-byte tag");
    }
    List<byte[]> candidates = keys.withKid(kid);
    if (candidates.isEmpty()) {
      throw new OpenFailure(Failure.UNKNOWN_KEY, "cannot decrypt on this device: it holds no key " + kid);
    }
    String reason = null;
    for (byte[] privateKey : candidates) {
      try {
        return Hpke.open(enc, privateKey, info, NO_AAD, ciphertext);
      } catch (HpkeOpenException e) {
        reason = e.getMessage();
      }
    }
    throw new OpenFailure(Failure.AUTHENTICATION_FAILED, "the encrypted body does not open with key " + kid + ": "
        + reason);
  }

  /** The JSON value of the bytes, or null when they are not JSON. */
  private static JsonNode parse(byte[] body) {
    try {
      return Json.MAPPER.readTree(body);
    } catch (IOException e) {
      return null;
    }
  }

  /** {@code v} is the number 2 and {@code alg} this format's: JavaScript's {@code v === 2} reads 2.0 as 2 too. */
  /** Any v2 body is encrypted: one of another alg does not open here, and is never shown as text. */
  private static boolean isEnvelope(JsonNode node) {
    JsonNode version = node.path("v");
    return node.isObject() && version.isNumber() && version.doubleValue() == VERSION;
  }

  private static String text(JsonNode node, String field) throws OpenFailure {
    String value = node.path(field).textValue();
    if (value == null || value.isEmpty()) {
      throw malformed(field + " is missing or not a string");
    }
    return value;
  }

  /** Standard base64 with its padding, as the browser's decoder demands. */
  private static byte[] base64(JsonNode node, String field) throws OpenFailure {
    String value = text(node, field);
    try {
      if (value.length() % 4 != 0) {
        throw new IllegalArgumentException("length " + value.length() + " is not a multiple of 4");
      }
      return Base64.getDecoder().decode(value);
    } catch (IllegalArgumentException e) {
      throw malformed(field + " is not padded standard base64: " + e.getMessage());
    }
  }

  private static OpenFailure malformed(String detail) {
    return new OpenFailure(Failure.MALFORMED, "malformed encrypted body: " + detail);
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
