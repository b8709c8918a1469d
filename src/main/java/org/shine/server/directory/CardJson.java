package org.shine.server.directory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.model.UserCard;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.protocol.Fields;
import org.shine.server.protocol.ProtocolException;
import org.shine.server.util.WsUrls;

/**
 * Strict JSON form of a {@link UserCard} (PROTOCOL §4): parses what a client or a server sent, v1 or v3 (a card with
 * {@code keys} and without {@code publicKeyB64}), and renders the canonical form of each.
 */
public final class CardJson {
  /** Device keys a v3 card lists, at most. */
  public static final int MAX_DEVICE_KEYS = 8;
  /** Retired keys and revoked keys a v3 card lists, at most (each). */
  public static final int MAX_LISTED_OLD_KEYS = 16;
  /** Characters of a device key's label, at most. */
  public static final int MAX_LABEL_CHARS = 32;
  /** The highest epoch or version of a v3 card: exact in every JSON reader (2^53 − 1). */
  public static final long MAX_SAFE_INTEGER = (1L << 53) - 1;
  /** X25519 public keys are 32 raw bytes. */
  private static final int ENCRYPTION_KEY_SIZE = 32;
  private static final Set<String> V1_FIELDS = Set.of("login", "publicKeyB64", "accessServers", "version",
      "signatureB64");
  private static final Set<String> V3_FIELDS = Set.of("login", "epoch", "version", "keys", "recoveryKeyB64",
      "encryptionKeyB64", "retiredKeys", "revokedKeysB64", "accessServers", "signerKeyB64", "signatureB64");
  private static final Set<String> ROUTE_FIELDS = Set.of("serverLogin", "url");
  private static final Set<String> KEY_FIELDS = Set.of("publicKeyB64", "label");
  private static final Set<String> RETIRED_FIELDS = Set.of("publicKeyB64", "retiredAtMs");

  private CardJson() {
  }

  public static UserCard parse(JsonNode node) {
    if (node != null && node.isObject() && node.has("keys") && !node.has("publicKeyB64")) {
      return parseV3(node);
    }
    Fields fields = Fields.of(node, "card", V1_FIELDS);
    String login = fields.login("login");
    String publicKeyB64 = key(fields, "publicKeyB64", Ed25519Signer.PUBLIC_KEY_SIZE);
    long version = fields.requiredLong("version", 0, Long.MAX_VALUE);
    String signatureB64 = fields.requiredString("signatureB64");
    fields.base64("signatureB64", Ed25519Signer.SIGNATURE_SIZE);
    return UserCard.v1(login, publicKeyB64, routes(fields), version, signatureB64);
  }

  private static UserCard parseV3(JsonNode node) {
    Fields fields = Fields.of(node, "card", V3_FIELDS);
    String login = fields.login("login");
    long epoch = fields.requiredLong("epoch", 0, MAX_SAFE_INTEGER);
    long version = fields.requiredLong("version", 0, MAX_SAFE_INTEGER);
    Set<String> seen = new HashSet<>();
    List<UserCard.DeviceKey> keys = new ArrayList<>();
    JsonNode keyList = array(fields, "keys", 1, MAX_DEVICE_KEYS);
    for (int i = 0; i < keyList.size(); i++) {
      Fields key = Fields.of(keyList.get(i), "card.keys[" + i + "]", KEY_FIELDS);
      String publicKeyB64 = once(seen, key(key, "publicKeyB64", Ed25519Signer.PUBLIC_KEY_SIZE));
      String label = key.has("label") ? key.requiredString("label") : null;
      if (label != null && label.codePointCount(0, label.length()) > MAX_LABEL_CHARS) {
        throw invalid("card.keys[" + i + "].label must be at most " + MAX_LABEL_CHARS + " characters");
      }
      keys.add(new UserCard.DeviceKey(publicKeyB64, label));
    }
    String recovery = fields.has("recoveryKeyB64")
        ? once(seen, key(fields, "recoveryKeyB64", Ed25519Signer.PUBLIC_KEY_SIZE)) : null;
    String encryption = fields.has("encryptionKeyB64") ? key(fields, "encryptionKeyB64", ENCRYPTION_KEY_SIZE) : null;
    List<UserCard.RetiredKey> retired = new ArrayList<>();
    if (fields.has("retiredKeys")) {
      JsonNode list = array(fields, "retiredKeys", 0, MAX_LISTED_OLD_KEYS);
      for (int i = 0; i < list.size(); i++) {
        Fields key = Fields.of(list.get(i), "card.retiredKeys[" + i + "]", RETIRED_FIELDS);
        retired.add(new UserCard.RetiredKey(once(seen, key(key, "publicKeyB64", Ed25519Signer.PUBLIC_KEY_SIZE)),
            key.requiredLong("retiredAtMs", 0, MAX_SAFE_INTEGER)));
      }
    }
    List<String> revoked = new ArrayList<>();
    if (fields.has("revokedKeysB64")) {
      JsonNode list = array(fields, "revokedKeysB64", 0, MAX_LISTED_OLD_KEYS);
      for (int i = 0; i < list.size(); i++) {
        if (!list.get(i).isTextual()) {
          throw invalid("card.revokedKeysB64[" + i + "] must be a string");
        }
        revoked.add(once(seen, canonicalKey(list.get(i).asText(), "card.revokedKeysB64[" + i + "]",
            Ed25519Signer.PUBLIC_KEY_SIZE)));
      }
    }
    String signer = key(fields, "signerKeyB64", Ed25519Signer.PUBLIC_KEY_SIZE);
    String signatureB64 = fields.requiredString("signatureB64");
    fields.base64("signatureB64", Ed25519Signer.SIGNATURE_SIZE);
    return new UserCard(login, epoch, version, keys, recovery, encryption, retired, revoked, routes(fields), signer,
        signatureB64, true);
  }

  public static ObjectNode render(ObjectMapper mapper, UserCard card) {
    ObjectNode node = mapper.createObjectNode();
    node.put("login", card.login());
    if (!card.v3()) {
      node.put("publicKeyB64", card.signerKeyB64());
      renderRoutes(node, card);
      node.put("version", card.version());
      node.put("signatureB64", card.signatureB64());
      return node;
    }
    node.put("epoch", card.epoch());
    node.put("version", card.version());
    ArrayNode keys = node.putArray("keys");
    for (UserCard.DeviceKey key : card.keys()) {
      ObjectNode entry = keys.addObject().put("publicKeyB64", key.publicKeyB64());
      if (key.label() != null) {
        entry.put("label", key.label());
      }
    }
    if (card.recoveryKeyB64() != null) {
      node.put("recoveryKeyB64", card.recoveryKeyB64());
    }
    if (card.encryptionKeyB64() != null) {
      node.put("encryptionKeyB64", card.encryptionKeyB64());
    }
    if (!card.retiredKeys().isEmpty()) {
      ArrayNode retired = node.putArray("retiredKeys");
      card.retiredKeys().forEach(key -> retired.addObject().put("publicKeyB64", key.publicKeyB64())
          .put("retiredAtMs", key.retiredAtMs()));
    }
    if (!card.revokedKeysB64().isEmpty()) {
      ArrayNode revoked = node.putArray("revokedKeysB64");
      card.revokedKeysB64().forEach(revoked::add);
    }
    renderRoutes(node, card);
    node.put("signerKeyB64", card.signerKeyB64());
    node.put("signatureB64", card.signatureB64());
    return node;
  }

  private static void renderRoutes(ObjectNode node, UserCard card) {
    ArrayNode servers = node.putArray("accessServers");
    for (UserCard.Route route : card.accessServers()) {
      servers.addObject().put("serverLogin", route.serverLogin()).put("url", route.url());
    }
  }

  private static List<UserCard.Route> routes(Fields fields) {
    JsonNode servers = fields.required("accessServers");
    if (!servers.isArray() || servers.isEmpty() || servers.size() > 2) {
      throw invalid("card.accessServers must list 1 or 2 servers");
    }
    List<UserCard.Route> routes = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < servers.size(); i++) {
      Fields route = Fields.of(servers.get(i), "card.accessServers[" + i + "]", ROUTE_FIELDS);
      String serverLogin = route.serverName("serverLogin");
      String url = route.requiredString("url");
      if (!WsUrls.isWsUrl(url) || url.contains("|")) {
        throw invalid("card.accessServers[" + i + "].url must be a ws:// or wss:// URL");
      }
      if (!seen.add(serverLogin)) {
        throw invalid("card.accessServers lists " + serverLogin + " twice");
      }
      routes.add(new UserCard.Route(serverLogin, url));
    }
    return routes;
  }

  private static JsonNode array(Fields fields, String name, int min, int max) {
    JsonNode list = fields.required(name);
    if (!list.isArray() || list.size() < min || list.size() > max) {
      throw invalid("card." + name + " must list " + min + ".." + max + " entries");
    }
    return list;
  }

  /** A key field in canonical padded base64 of {@code size} bytes (the text is signed and compared as given). */
  private static String key(Fields fields, String name, int size) {
    return canonicalKey(fields.requiredString(name), "card." + name, size);
  }

  private static String canonicalKey(String text, String field, int size) {
    byte[] raw;
    try {
      raw = Base64.getDecoder().decode(text);
    } catch (IllegalArgumentException e) {
      throw ProtocolException.badRequest(ErrorCode.BAD_BASE64, field + " is not valid base64");
    }
    if (raw.length != size) {
      throw invalid(field + " must decode to " + size + " bytes");
    }
    if (!Base64.getEncoder().encodeToString(raw).equals(text)) {
      throw ProtocolException.badRequest(ErrorCode.BAD_BASE64, field + " is not canonical padded standard base64");
    }
    return text;
  }

  /** A key may stand in one list of a card only. */
  private static String once(Set<String> seen, String keyB64) {
    if (!seen.add(keyB64)) {
      throw invalid("card lists key " + keyB64 + " twice (a key stands in one list only)");
    }
    return keyB64;
  }

  private static ProtocolException invalid(String message) {
    return ProtocolException.badRequest(ErrorCode.INVALID_FIELD, message);
  }
}
