package org.shine.server.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.type.LogicalType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.shine.server.dm.Logins;
import org.shine.server.util.Cidr;
import org.shine.server.util.WsUrls;

/**
 * Reads a config file over the built-in defaults: every key missing from the file takes its default, a key the
 * defaults do not know is an error naming the key, and {@code SHINE_DB_*} environment variables override {@code db}.
 */
public final class ConfigLoader {
  private static final ObjectMapper MAPPER = strictMapper();
  /** A page must hold at least one item of the largest kind (a pair: two 70 KiB containers in base64). */
  public static final int MIN_RESPONSE_BYTES = 262_144;
  private static final long MAX_CLOCK_OFFSET_MS = 86_400_000;
  private static final Set<String> PEER_KEYS = Set.of("serverLogin", "url", "publicKeyB64", "protocol", "insecure",
      "legacy");

  private ConfigLoader() {
  }

  /** No coercion between JSON types: "7101" is not a port, 1.5 not a count, 1 not a boolean. */
  private static ObjectMapper strictMapper() {
    ObjectMapper mapper = JsonMapper.builder()
        .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
        .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
        .build();
    mapper.coercionConfigFor(LogicalType.Textual)
        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
    mapper.coercionConfigFor(LogicalType.Boolean).setCoercion(CoercionInputShape.Integer, CoercionAction.Fail);
    return mapper;
  }

  public static AppConfig load(Path file, Map<String, String> env) {
    String text;
    try {
      text = Files.readString(file);
    } catch (IOException e) {
      throw new ConfigException("cannot read config file " + file + ": " + e.getMessage(), e);
    }
    return parse(text, env);
  }

  /** Parses config JSON text over the defaults and applies the environment overrides. */
  public static AppConfig parse(String json, Map<String, String> env) {
    JsonNode user;
    try {
      user = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new ConfigException("config is not valid JSON: " + e.getOriginalMessage(), e);
    }
    if (user == null || !user.isObject()) {
      throw new ConfigException("config must be a JSON object");
    }
    ObjectNode merged = defaults();
    merge(merged, (ObjectNode) user, "");
    applyEnv((ObjectNode) merged.get("db"), env);
    AppConfig config;
    try {
      config = MAPPER.treeToValue(merged, AppConfig.class);
    } catch (JsonProcessingException e) {
      throw new ConfigException("invalid config value: " + e.getOriginalMessage(), e);
    }
    validate(config);
    return config;
  }

  public static AppConfig defaultsConfig() {
    return parse("{}", Map.of());
  }

  private static ObjectNode defaults() {
    try (InputStream in = ConfigLoader.class.getResourceAsStream("/config-defaults.json")) {
      return (ObjectNode) MAPPER.readTree(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void merge(ObjectNode target, ObjectNode source, String path) {
    for (Map.Entry<String, JsonNode> field : source.properties()) {
      String key = path + field.getKey();
      JsonNode current = target.get(field.getKey());
      if (current == null) {
        throw new ConfigException("unknown config key: " + key);
      }
      JsonNode value = field.getValue();
      if (current.isObject()) {
        if (!value.isObject()) {
          throw new ConfigException("config key " + key + " must be an object");
        }
        merge((ObjectNode) current, (ObjectNode) value, key + ".");
      } else {
        if (key.equals("peers")) {
          checkPeers(value);
        }
        target.set(field.getKey(), value);
      }
    }
  }

  private static void checkPeers(JsonNode peers) {
    if (!peers.isArray()) {
      throw new ConfigException("config key peers must be an array");
    }
    for (int i = 0; i < peers.size(); i++) {
      JsonNode peer = peers.get(i);
      if (!peer.isObject()) {
        throw new ConfigException("config key peers[" + i + "] must be an object");
      }
      for (Iterator<String> names = peer.fieldNames(); names.hasNext(); ) {
        String name = names.next();
        if (!PEER_KEYS.contains(name)) {
          throw new ConfigException("unknown config key: peers[" + i + "]." + name);
        }
      }
      ObjectNode entry = (ObjectNode) peer;
      // v2's "legacy": true is v3's "protocol": "v1" (PROTOCOL §6a step 6); both at once must agree
      JsonNode legacy = entry.remove("legacy");
      if (legacy != null) {
        if (!legacy.isBoolean()) {
          throw new ConfigException("config key peers[" + i + "].legacy must be true or false");
        }
        String implied = legacy.booleanValue() ? "v1" : "v3";
        if (entry.has("protocol") && !entry.get("protocol").asText().equals(implied) && legacy.booleanValue()) {
          throw new ConfigException("config keys peers[" + i + "].legacy and peers[" + i + "].protocol disagree;"
              + " legacy is the old name of \"protocol\": \"v1\"");
        }
        if (!entry.has("protocol")) {
          entry.put("protocol", implied);
        }
      }
      if (!entry.has("protocol")) {
        entry.put("protocol", "v3");
      }
      if (!entry.has("insecure")) {
        entry.put("insecure", false);
      }
    }
  }

  private static void applyEnv(ObjectNode db, Map<String, String> env) {
    override(db, "host", env.get("SHINE_DB_HOST"), false);
    override(db, "port", env.get("SHINE_DB_PORT"), true);
    override(db, "database", env.get("SHINE_DB_NAME"), false);
    override(db, "user", env.get("SHINE_DB_USER"), false);
    override(db, "password", env.get("SHINE_DB_PASSWORD"), false);
  }

  private static void override(ObjectNode db, String key, String value, boolean numeric) {
    if (value == null || (value.isEmpty() && numeric)) {
      return;
    }
    if (numeric) {
      try {
        db.put(key, Integer.parseInt(value.trim()));
      } catch (NumberFormatException e) {
        throw new ConfigException("environment override of db." + key + " is not a number: " + value);
      }
    } else {
      db.put(key, value);
    }
  }

  private static void validate(AppConfig c) {
    require(Logins.isServerName(c.serverLogin()),
        "serverLogin must match [a-z0-9.-]{1,253} (a DNS name) or [a-z0-9_.-]{1,32}");
    require(Math.abs(c.testing().clockOffsetMs()) <= MAX_CLOCK_OFFSET_MS,
        "testing.clockOffsetMs must be within one day (-86400000..86400000)");
    require(c.http().host() != null && !c.http().host().isBlank(), "http.host must be a non-empty string");
    require(c.db().host() != null && c.db().database() != null && c.db().user() != null
        && c.db().password() != null, "db.host, db.database, db.user and db.password must be strings");
    require(c.http().port() >= 0 && c.http().port() <= 65535, "http.port must be 0..65535");
    requireWsUrl(c.publicUrl(), "publicUrl");
    for (int i = 0; i < c.publicUrlAliases().size(); i++) {
      requireWsUrl(c.publicUrlAliases().get(i), "publicUrlAliases[" + i + "]");
    }
    require(c.db().port() > 0 && c.db().port() <= 65535, "db.port must be 1..65535");
    require(c.db().poolSize() >= 1, "db.poolSize must be at least 1");
    require(c.db().connectTimeoutMs() >= 1, "db.connectTimeoutMs must be positive");
    require(c.db().statementTimeoutMs() >= 0, "db.statementTimeoutMs must not be negative (0: no limit)");
    require(c.serverKeyFile() == null || !c.serverKeyFile().isBlank(), "serverKeyFile must be a path or null");
    Set<String> peerLogins = new HashSet<>();
    for (int i = 0; i < c.peers().size(); i++) {
      AppConfig.Peer peer = c.peers().get(i);
      require(Logins.isServerName(peer.serverLogin()), "peers[" + i + "].serverLogin must be a valid server name");
      require(peerLogins.add(peer.serverLogin()), "peers lists " + peer.serverLogin() + " twice");
      requireWsUrl(peer.url(), "peers[" + i + "].url");
      require(peer.publicKeyB64() == null || isKey(peer.publicKeyB64()),
          "peers[" + i + "].publicKeyB64 must be a standard base64 Ed25519 public key (32 bytes)");
    }
    List<Long> schedule = c.delivery().scheduleMs();
    require(!schedule.isEmpty() && schedule.get(0) == 0, "delivery.scheduleMs must start with 0");
    for (int i = 1; i < schedule.size(); i++) {
      require(schedule.get(i) > schedule.get(i - 1), "delivery.scheduleMs must be strictly increasing");
    }
    require(c.delivery().askSiblingFromAttempt() >= 1, "delivery.askSiblingFromAttempt must be at least 1");
    require(c.delivery().workerPeriodMs() >= 1, "delivery.workerPeriodMs must be positive");
    require(c.delivery().leaseMs() >= 1, "delivery.leaseMs must be positive");
    require(c.delivery().callTimeoutMs() >= 1, "delivery.callTimeoutMs must be positive");
    require(c.delivery().maxInFlight() >= 1, "delivery.maxInFlight must be positive");
    require(c.delivery().queueCapacity() >= 0, "delivery.queueCapacity must not be negative");
    require(c.delivery().maxClockSkewMs() >= 0, "delivery.maxClockSkewMs must not be negative");
    require(c.sync().periodMs() >= 1, "sync.periodMs must be positive");
    require(c.sync().pageSize() >= 1, "sync.pageSize must be positive");
    require(c.sync().maxPagesPerRun() >= 1, "sync.maxPagesPerRun must be positive");
    require(c.sync().markAllPerUserPerMin() >= 1, "sync.markAllPerUserPerMin must be positive");
    require(c.sync().forwardHoldMs() >= 0, "sync.forwardHoldMs must not be negative");
    require(c.delivery().maxInFlightPerDestination() >= 1, "delivery.maxInFlightPerDestination must be positive");
    require(c.delivery().maxInFlightPerSender() >= 1, "delivery.maxInFlightPerSender must be positive");
    require(c.delivery().timeoutsToDown() >= 1, "delivery.timeoutsToDown must be positive");
    require(c.hub().accessTtlS() >= 1 && c.hub().refreshTtlS() >= 1, "hub TTLs must be positive");
    require(c.hub().visibilityTimeoutS() >= 1, "hub.visibilityTimeoutS must be positive");
    require(c.hub().maxWaitS() >= 0, "hub.maxWaitS must not be negative");
    require(c.hub().retentionS() >= 1, "hub.retentionS must be positive");
    require(c.hub().refreshGraceS() >= 0, "hub.refreshGraceS must not be negative");
    require(c.hub().challengesPerLogin() >= 1, "hub.challengesPerLogin must be positive");
    require(c.cluster().port() > 0 && c.cluster().port() <= 65535, "cluster.port must be 1..65535");
    require(!c.cluster().members().isEmpty(), "cluster.members must name at least one host");
    require(c.cluster().host() != null && !c.cluster().host().isBlank(), "cluster.host must be a non-empty string");
    require(!Set.of("0.0.0.0", "::", "[::]", "*").contains(c.cluster().host()), "cluster.host must be one address of"
        + " this machine, not a wildcard (it is also the address the other nodes connect to)");
    AppConfig.Tls tls = c.cluster().tls();
    require(tls == null || (tls.keyFile() != null && tls.certFile() != null && tls.trustFile() != null),
        "cluster.tls must name keyFile, certFile and trustFile (PEM files)");
    AppConfig.Limits l = c.limits();
    require(l.maxFrameBytes() >= 1024, "limits.maxFrameBytes must be at least 1024");
    require(l.maxInFlightPerConnection() >= 1, "limits.maxInFlightPerConnection must be positive");
    require(l.maxConnections() >= 1, "limits.maxConnections must be positive");
    require(l.maxConnectionsPerIp() >= 0, "limits.maxConnectionsPerIp must not be negative (0: no limit)");
    require(l.authTimeoutMs() >= 1, "limits.authTimeoutMs must be positive");
    require(l.idleTimeoutMs() >= 3, "limits.idleTimeoutMs must be at least 3");
    require(l.maxResponseBytes() >= MIN_RESPONSE_BYTES, "limits.maxResponseBytes must be at least "
        + MIN_RESPONSE_BYTES + " (one page must hold the largest item)");
    require(l.sendsPerUserPerS() >= 1, "limits.sendsPerUserPerS must be positive");
    require(l.writeQueueBytes() >= 1024, "limits.writeQueueBytes must be at least 1024");
    require(l.slowReaderCloseMs() >= 1, "limits.slowReaderCloseMs must be positive");
    require(l.verifyQueue() >= 1, "limits.verifyQueue must be positive");
    require(l.cardsPerIpPerMin() >= 1, "limits.cardsPerIpPerMin must be positive");
    require(l.openOpsPerIpPerS() >= 1, "limits.openOpsPerIpPerS must be positive");
    require(l.openOpsPerLoginPerS() >= 1, "limits.openOpsPerLoginPerS must be positive");
    require(l.inboundPerRecipientPerS() >= 1, "limits.inboundPerRecipientPerS must be positive");
    require(l.opsPerPeerPerS() >= 1, "limits.opsPerPeerPerS must be positive");
    requireCidrs(c.egress().denyCidrs(), "egress.denyCidrs");
    requireCidrs(c.egress().allowCidrs(), "egress.allowCidrs");
    require(c.egress().keyFetchesPerS() >= 1, "egress.keyFetchesPerS must be positive");
    require(c.quotas().settingsCount() >= 1, "quotas.settingsCount must be positive");
    require(c.quotas().settingsBytes() >= 1024, "quotas.settingsBytes must be at least 1024");
    require(c.admin().host() != null && !c.admin().host().isBlank(), "admin.host must be a non-empty string");
    require(c.admin().port() >= 0 && c.admin().port() <= 65535, "admin.port must be 0..65535 (0: off)");
    // the admin API has no login of its own: whoever reaches it may read the backlog and trigger attempts
    require(isLoopback(c.admin().host()), "admin.host must be a loopback address (127.0.0.0/8, ::1 or localhost):"
        + " the admin API has no authentication; reach it from elsewhere through SSH");
    require(c.metrics().gaugePeriodMs() >= 10, "metrics.gaugePeriodMs must be at least 10");
    AppConfig.Instances n = c.instances();
    require(n.gateway() >= 1 && n.delivery() >= 1 && n.retry() >= 1 && n.sync() >= 1 && n.hub() >= 1
        && n.directory() >= 1, "every instances count must be at least 1");
  }

  /** A literal loopback address or {@code localhost}; no name is looked up. */
  private static boolean isLoopback(String host) {
    if (host == null) {
      return false;
    }
    String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    return h.equals("localhost") || h.equals("::1") || h.equals("0:0:0:0:0:0:0:1")
        || h.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");
  }

  private static void requireCidrs(List<String> blocks, String key) {
    for (int i = 0; i < blocks.size(); i++) {
      try {
        Cidr.parse(blocks.get(i));
      } catch (IllegalArgumentException e) {
        throw new ConfigException("invalid config: " + key + "[" + i + "] must be an address block such as"
            + " 127.0.0.0/8 or ::1/128 (" + e.getMessage() + ")");
      }
    }
  }

  private static boolean isKey(String b64) {
    try {
      return b64.length() % 4 == 0 && Base64.getDecoder().decode(b64).length == 32;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static void requireWsUrl(String url, String key) {
    require(url != null, key + " is required");
    require(WsUrls.isWsUrl(url), key + " must be a ws:// or wss:// URL");
  }

  private static void require(boolean condition, String message) {
    if (!condition) {
      throw new ConfigException("invalid config: " + message);
    }
  }
}
