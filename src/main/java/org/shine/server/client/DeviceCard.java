package org.shine.server.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.shine.server.dm.CardText;
import org.shine.server.dm.Ed25519Signer;
import org.shine.server.dm.KeyFile;
import org.shine.server.util.Json;

/**
 * A v3 user card being written by its owner (PROTOCOL §4 v3): device keys, the recovery and encryption keys, retired
 * and revoked keys, routes; {@link #next} starts the following card from a served one (v1 or v3) and {@link #sign}
 * signs it. The steps a person takes — add a device, rotate, revoke, set a recovery key, recover — are edits of this.
 */
public final class DeviceCard {
  private final String login;
  private long epoch;
  private long version;
  private final Map<String, String> keys = new LinkedHashMap<>();
  private String recoveryKeyB64;
  private String encryptionKeyB64;
  private final Map<String, Long> retired = new LinkedHashMap<>();
  private final List<String> revoked = new ArrayList<>();
  private final List<Map.Entry<String, String>> routes = new ArrayList<>();

  private DeviceCard(String login) {
    this.login = Objects.requireNonNull(login);
  }

  /** A first card: epoch 0, version 1, one device key. */
  public static DeviceCard first(String login, String deviceKeyB64, String label,
      List<Map.Entry<String, String>> routes) {
    DeviceCard card = new DeviceCard(login);
    card.version = 1;
    card.keys.put(deviceKeyB64, label);
    card.routes.addAll(routes);
    return card;
  }

  /**
   * The card that follows {@code served} (its JSON as a server serves it, v1 or v3): same epoch, version + 1, the same
   * keys and routes.
   */
  public static DeviceCard next(JsonNode served) {
    DeviceCard card = new DeviceCard(served.path("login").asText());
    card.epoch = served.path("epoch").asLong(0);
    card.version = served.path("version").asLong() + 1;
    if (served.has("publicKeyB64")) {
      card.keys.put(served.get("publicKeyB64").asText(), null);
    }
    served.path("keys").forEach(key -> card.keys.put(key.path("publicKeyB64").asText(),
        key.hasNonNull("label") ? key.get("label").asText() : null));
    card.recoveryKeyB64 = served.hasNonNull("recoveryKeyB64") ? served.get("recoveryKeyB64").asText() : null;
    card.encryptionKeyB64 = served.hasNonNull("encryptionKeyB64") ? served.get("encryptionKeyB64").asText() : null;
    served.path("retiredKeys").forEach(key -> card.retired.put(key.path("publicKeyB64").asText(),
        key.path("retiredAtMs").asLong()));
    served.path("revokedKeysB64").forEach(key -> card.revoked.add(key.asText()));
    served.path("accessServers").forEach(route -> card.routes.add(Map.entry(route.path("serverLogin").asText(),
        route.path("url").asText())));
    return card;
  }

  public String login() {
    return login;
  }

  public long epoch() {
    return epoch;
  }

  public long version() {
    return version;
  }

  /** The device keys (base64, card order). */
  public List<String> deviceKeys() {
    return List.copyOf(keys.keySet());
  }

  public String recoveryKeyB64() {
    return recoveryKeyB64;
  }

  /** Adds a device key (at most 8 stand in a card; the server refuses more). */
  public DeviceCard addKey(String keyB64, String label) {
    keys.put(keyB64, label);
    return this;
  }

  /** A rotation: {@code keyB64} leaves the device keys as retired at {@code atMs}. */
  public DeviceCard retire(String keyB64, long atMs) {
    keys.remove(keyB64);
    retired.put(keyB64, atMs);
    return this;
  }

  /** A compromise: {@code keyB64} leaves the device keys (or the retired ones) as revoked. */
  public DeviceCard revoke(String keyB64) {
    keys.remove(keyB64);
    retired.remove(keyB64);
    if (!revoked.contains(keyB64)) {
      revoked.add(keyB64);
    }
    return this;
  }

  /** Sets (or, with null, removes) the recovery key. */
  public DeviceCard recoveryKey(String keyB64) {
    recoveryKeyB64 = keyB64;
    return this;
  }

  /** Sets (or, with null, removes) the X25519 encryption key. */
  public DeviceCard encryptionKey(String keyB64) {
    encryptionKeyB64 = keyB64;
    return this;
  }

  /** A recovery: the next epoch, every device key revoked and {@code newDeviceKeyB64} the one device key. */
  public DeviceCard recoverTo(String newDeviceKeyB64, String label) {
    epoch++;
    for (String key : List.copyOf(keys.keySet())) {
      revoke(key);
    }
    keys.put(newDeviceKeyB64, label);
    return this;
  }

  /** Replaces the routes (serverLogin → url, in order): a user moving to other access servers. */
  public DeviceCard routes(List<Map.Entry<String, String>> newRoutes) {
    routes.clear();
    routes.addAll(newRoutes);
    return this;
  }

  /** Sets the label of a device key already in the card (labels are not signed). */
  public DeviceCard label(String keyB64, String label) {
    if (keys.containsKey(keyB64)) {
      keys.put(keyB64, label);
    }
    return this;
  }

  public String encryptionKeyB64() {
    return encryptionKeyB64;
  }

  /** Sets the version (a recovery may keep counting from any version). */
  public DeviceCard version(long newVersion) {
    version = newVersion;
    return this;
  }

  /** The card as JSON, signed by {@code signer} (a current device key, or the recovery key for a new epoch). */
  public ObjectNode sign(KeyFile signer) {
    List<Map.Entry<String, Long>> retiredList = new ArrayList<>(retired.entrySet());
    byte[] text = CardText.v3(login, epoch, version, deviceKeys(), recoveryKeyB64, encryptionKeyB64, retiredList,
        revoked, routes);
    ObjectNode card = Json.MAPPER.createObjectNode().put("login", login).put("epoch", epoch).put("version", version);
    ArrayNode keyList = card.putArray("keys");
    keys.forEach((key, label) -> {
      ObjectNode entry = keyList.addObject().put("publicKeyB64", key);
      if (label != null) {
        entry.put("label", label);
      }
    });
    if (recoveryKeyB64 != null) {
      card.put("recoveryKeyB64", recoveryKeyB64);
    }
    if (encryptionKeyB64 != null) {
      card.put("encryptionKeyB64", encryptionKeyB64);
    }
    if (!retired.isEmpty()) {
      ArrayNode list = card.putArray("retiredKeys");
      retired.forEach((key, at) -> list.addObject().put("publicKeyB64", key).put("retiredAtMs", at));
    }
    if (!revoked.isEmpty()) {
      ArrayNode list = card.putArray("revokedKeysB64");
      revoked.forEach(list::add);
    }
    ArrayNode servers = card.putArray("accessServers");
    routes.forEach(route -> servers.addObject().put("serverLogin", route.getKey()).put("url", route.getValue()));
    card.put("signerKeyB64", signer.publicKeyB64());
    card.put("signatureB64", Base64.getEncoder().encodeToString(Ed25519Signer.sign(signer.privateKey(), text)));
    return card;
  }
}
