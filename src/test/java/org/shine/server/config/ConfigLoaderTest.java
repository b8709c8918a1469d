package org.shine.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The config contract of PROTOCOL §11. Main maps a {@link ConfigException} to exit code 2 with the message on
 * stderr, so "the process exits 2 naming the key" is exactly "ConfigLoader throws ConfigException naming the key".
 */
class ConfigLoaderTest {
  /** The example of PROTOCOL §11, verbatim except for values changed so that none equals its default. */
  private static final String FULL_EXAMPLE = """
      {
        "serverLogin": "s2",
        "http": {"host": "0.0.0.0", "port": 7102},
        "publicUrl": "wss://dm.example.org/ws",
        "publicUrlAliases": ["wss://dm.example.org:443/ws"],
        "serverKeyFile": "/etc/shine/server.key",
        "db": {"host": "db.internal", "port": 6432, "database": "shine_s2", "user": "shine", "password": "pw", "poolSize": 8,
               "connectTimeoutMs": 1500, "statementTimeoutMs": 0},
        "peers": [{"serverLogin": "s1", "url": "ws://127.0.0.1:7101/ws", "publicKeyB64": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="},
                  {"serverLogin": "s3", "url": "wss://s3.example.org/ws", "legacy": true},
                  {"serverLogin": "s4.example.org", "url": "ws://s4.example.org/ws", "protocol": "v2", "insecure": true}],
        "delivery": {"scheduleMs": [0, 1000, 2000], "askSiblingFromAttempt": 2,
                     "workerPeriodMs": 500, "leaseMs": 3000, "callTimeoutMs": 700,
                     "maxInFlight": 32, "queueCapacity": 100, "maxClockSkewMs": 1000,
                     "maxInFlightPerDestination": 4, "maxInFlightPerSender": 3, "timeoutsToDown": 2},
        "sync": {"periodMs": 250, "pageSize": 50, "maxPagesPerRun": 7, "markAllPerUserPerMin": 2,
            "forwardHoldMs": 1500},
        "hub": {"accessTtlS": 60, "refreshTtlS": 3600, "visibilityTimeoutS": 5, "maxWaitS": 10, "retentionS": 86400,
                "refreshGraceS": 5, "challengesPerLogin": 4},
        "limits": {"maxFrameBytes": 65536, "maxInFlightPerConnection": 8, "webSocketCompression": true,
                   "maxConnections": 100, "maxConnectionsPerIp": 3, "authTimeoutMs": 2000, "idleTimeoutMs": 9000,
                   "maxResponseBytes": 300000, "sendsPerUserPerS": 7, "writeQueueBytes": 4096,
                   "slowReaderCloseMs": 1500, "verifyQueue": 20, "cardsPerIpPerMin": 5, "openOpsPerIpPerS": 6,
                   "openOpsPerLoginPerS": 7, "inboundPerRecipientPerS": 8, "opsPerPeerPerS": 9},
        "egress": {"denyCidrs": ["127.0.0.9/32"], "allowCidrs": ["127.0.0.0/8", "::1"], "keyFetchesPerS": 2},
        "directory": {"registration": "invite"},
        "quotas": {"settingsCount": 10, "settingsBytes": 4096},
        "metrics": {"enabled": false},
        "admin": {"host": "127.0.0.2", "port": 7199},
        "cluster": {"enabled": true, "host": "127.0.0.5", "tls": {"keyFile": "node.key", "certFile": "node.crt", "trustFile": "ca.crt"}},
        "instances": {"gateway": 4, "delivery": 2, "retry": 3, "sync": 5, "hub": 6, "directory": 7},
        "testing": {"clockOffsetMs": -600000}
      }
      """;

  private static final String PINNED_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

  /** The example of PROTOCOL §11 exactly as printed there. */
  private static final String PROTOCOL_EXAMPLE = """
      {
        "serverLogin": "s1",
        "http": {"host": "127.0.0.1", "port": 7101},
        "publicUrl": "ws://127.0.0.1:7101/ws",
        "db": {"host": "127.0.0.1", "port": 5432, "database": "shine_s1", "user": "postgres", "password": "", "poolSize": 16},
        "peers": [{"serverLogin": "s2", "url": "ws://127.0.0.1:7102/ws"}],
        "delivery": {"scheduleMs": [0, 30000, 300000, 1500000, 3600000], "askSiblingFromAttempt": 3,
                     "workerPeriodMs": 5000, "leaseMs": 30000, "callTimeoutMs": 5000,
                     "maxInFlight": 256, "queueCapacity": 10000, "maxClockSkewMs": 600000},
        "sync": {"periodMs": 5000, "pageSize": 200},
        "hub": {"accessTtlS": 900, "refreshTtlS": 2592000, "visibilityTimeoutS": 30, "maxWaitS": 30},
        "limits": {"maxFrameBytes": 262144, "maxInFlightPerConnection": 64},
        "cluster": {"enabled": false},
        "instances": {"gateway": 2, "delivery": 1, "retry": 1, "sync": 1, "hub": 1}
      }
      """;

  /** The defaults shown in PROTOCOL §11 (no peers; instances.directory, absent there, is 1). */
  private static final AppConfig DEFAULTS = new AppConfig(
      "s1",
      new AppConfig.Http("127.0.0.1", 7101),
      "ws://127.0.0.1:7101/ws",
      List.of(),
      null,
      new AppConfig.Db("127.0.0.1", 5432, "shine_s1", "postgres", "", 16, 5000, 10_000),
      List.of(),
      new AppConfig.Delivery(List.of(0L, 30_000L, 300_000L, 1_500_000L, 3_600_000L), 3, 5000, 30_000, 5000, 256,
          10_000, 600_000, 32, 16, 3),
      new AppConfig.Sync(5000, 200, 50, 1, 30_000),
      new AppConfig.Hub(900, 2_592_000, 30, 30, 604_800, 30, 16),
      new AppConfig.Limits(262_144, 64, false, 50_000, 0, 30_000, 300_000, 4_194_304, 200, 1_048_576, 30_000,
          10_000, 30, 200, 50, 500, 2000),
      new AppConfig.Egress(List.of(), List.of(), 5),
      new AppConfig.Directory(AppConfig.Registration.SERVED),
      new AppConfig.Quotas(256, 1_048_576),
      new AppConfig.Metrics(true),
      new AppConfig.Admin("127.0.0.1", 0),
      new AppConfig.Cluster(false, List.of("127.0.0.1"), 5701, "127.0.0.1", null),
      new AppConfig.Instances(2, 1, 1, 1, 1, 1),
      new AppConfig.Testing(0));

  private static AppConfig parse(String json) {
    return ConfigLoader.parse(json, Map.of());
  }

  private static void assertRejected(String json, String... messageParts) {
    Throwable thrown = catchThrowable(() -> parse(json));
    assertThat(thrown).as("config %s", json).isExactlyInstanceOf(ConfigException.class);
    for (String part : messageParts) {
      assertThat(thrown).hasMessageContaining(part);
    }
  }

  // ---- values and defaults ----

  @Test
  @DisplayName("every value of a full config lands in AppConfig")
  void fullConfig() {
    AppConfig config = parse(FULL_EXAMPLE);

    assertThat(config).isEqualTo(new AppConfig(
        "s2",
        new AppConfig.Http("0.0.0.0", 7102),
        "wss://dm.example.org/ws",
        List.of("wss://dm.example.org:443/ws"),
        "/etc/shine/server.key",
        new AppConfig.Db("db.internal", 6432, "shine_s2", "shine", "pw", 8, 1500, 0),
        List.of(new AppConfig.Peer("s1", "ws://127.0.0.1:7101/ws", PINNED_KEY, AppConfig.PeerProtocol.V3, false),
            new AppConfig.Peer("s3", "wss://s3.example.org/ws", null, AppConfig.PeerProtocol.V1, false),
            new AppConfig.Peer("s4.example.org", "ws://s4.example.org/ws", null, AppConfig.PeerProtocol.V2, true)),
        new AppConfig.Delivery(List.of(0L, 1000L, 2000L), 2, 500, 3000, 700, 32, 100, 1000, 4, 3, 2),
        new AppConfig.Sync(250, 50, 7, 2, 1500),
        new AppConfig.Hub(60, 3600, 5, 10, 86_400, 5, 4),
        new AppConfig.Limits(65_536, 8, true, 100, 3, 2000, 9000, 300_000, 7, 4096, 1500, 20, 5, 6, 7, 8, 9),
        new AppConfig.Egress(List.of("127.0.0.9/32"), List.of("127.0.0.0/8", "::1"), 2),
        new AppConfig.Directory(AppConfig.Registration.INVITE),
        new AppConfig.Quotas(10, 4096),
        new AppConfig.Metrics(false),
        new AppConfig.Admin("127.0.0.2", 7199),
        new AppConfig.Cluster(true, List.of("127.0.0.1"), 5701, "127.0.0.5",
            new AppConfig.Tls("node.key", "node.crt", "ca.crt")),
        new AppConfig.Instances(4, 2, 3, 5, 6, 7),
        new AppConfig.Testing(-600_000)));
  }

  @Test
  @DisplayName("the PROTOCOL §11 example parses to the defaults plus its one peer")
  void protocolExample() {
    AppConfig config = parse(PROTOCOL_EXAMPLE);

    assertThat(config.peers()).containsExactly(new AppConfig.Peer("s2", "ws://127.0.0.1:7102/ws"));
    assertThat(config).isEqualTo(new AppConfig(DEFAULTS.serverLogin(), DEFAULTS.http(), DEFAULTS.publicUrl(),
        DEFAULTS.publicUrlAliases(), DEFAULTS.serverKeyFile(), DEFAULTS.db(), config.peers(), DEFAULTS.delivery(),
        DEFAULTS.sync(), DEFAULTS.hub(), DEFAULTS.limits(), DEFAULTS.egress(), DEFAULTS.directory(), DEFAULTS.quotas(),
        DEFAULTS.metrics(), DEFAULTS.admin(), DEFAULTS.cluster(), DEFAULTS.instances(),
        DEFAULTS.testing()));
  }

  @Test
  @DisplayName("an empty object gives the PROTOCOL §11 defaults")
  void emptyGivesDefaults() {
    assertThat(parse("{}")).isEqualTo(DEFAULTS);
    assertThat(ConfigLoader.defaultsConfig()).isEqualTo(DEFAULTS);
  }

  @Test
  @DisplayName("a nested object given in part keeps the defaults of its missing keys")
  void partialNestedObjectKeepsDefaults() {
    AppConfig config = parse("{\"http\": {\"port\": 9000}, \"delivery\": {\"maxInFlight\": 4}, \"db\": {}}");

    assertThat(config.http()).isEqualTo(new AppConfig.Http("127.0.0.1", 9000));
    assertThat(config.delivery().maxInFlight()).isEqualTo(4);
    assertThat(config.delivery().scheduleMs()).isEqualTo(DEFAULTS.delivery().scheduleMs());
    assertThat(config.delivery().queueCapacity()).isEqualTo(10_000);
    assertThat(config.db()).isEqualTo(DEFAULTS.db());
  }

  @Test
  @DisplayName("a given array replaces the default array instead of merging with it")
  void arraysReplace() {
    assertThat(parse("{\"delivery\": {\"scheduleMs\": [0, 10]}}").delivery().scheduleMs()).containsExactly(0L, 10L);
    assertThat(parse("{\"peers\": []}").peers()).isEmpty();
  }

  @Test
  @DisplayName("load reads the file and a missing file is a config error")
  void loadFromFile(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("server.json");
    Files.writeString(file, FULL_EXAMPLE);

    assertThat(ConfigLoader.load(file, Map.of())).isEqualTo(parse(FULL_EXAMPLE));
    assertThatThrownBy(() -> ConfigLoader.load(dir.resolve("missing.json"), Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("missing.json");
  }

  @Test
  @DisplayName("the sample config shipped in conf/ is valid")
  void shippedSampleIsValid() throws IOException {
    Path sample = Path.of("conf", "server.json");

    assertThat(sample).exists();
    assertThat(ConfigLoader.load(sample, Map.of()).serverLogin()).isNotBlank();
  }

  // ---- unknown keys ----

  @Test
  @DisplayName("an unknown top-level key is an error naming the key")
  void unknownTopLevelKey() {
    assertRejected("{\"serverlogin\": \"s1\"}", "serverlogin");
    assertRejected("{\"frobnicate\": 1}", "frobnicate");
  }

  @ParameterizedTest(name = "{1}")
  @CsvSource(delimiter = ';', value = {
      "{\"delivery\": {\"foo\": 1}};                                        delivery.foo",
      "{\"db\": {\"pasword\": \"x\"}};                                      db.pasword",
      "{\"cluster\": {\"enabled\": false, \"nodes\": 3}};                   cluster.nodes",
      "{\"peers\": [{\"serverLogin\": \"s2\", \"url\": \"ws://h/ws\", \"bar\": 1}]}; peers[0].bar",
      "{\"peers\": [{\"serverLogin\": \"s2\", \"url\": \"ws://h/ws\"}, {\"serverLogin\": \"s3\", \"url\": \"ws://h/ws\", \"x\": 0}]}; peers[1].x"})
  @DisplayName("an unknown nested key is an error naming the key with its path")
  void unknownNestedKey(String json, String key) {
    assertRejected(json, key);
  }

  // ---- environment ----

  @Test
  @DisplayName("SHINE_DB_* environment variables win over the file's db values")
  void environmentOverridesDb() {
    Map<String, String> env = Map.of(
        "SHINE_DB_HOST", "pg.example.org",
        "SHINE_DB_PORT", "15432",
        "SHINE_DB_NAME", "shine_env",
        "SHINE_DB_USER", "env_user",
        "SHINE_DB_PASSWORD", "env secret");

    AppConfig config = ConfigLoader.parse(FULL_EXAMPLE, env);

    assertThat(config.db()).isEqualTo(new AppConfig.Db("pg.example.org", 15432, "shine_env", "env_user", "env secret", 8, 1500, 0));
    assertThat(config.serverLogin()).isEqualTo("s2");
  }

  @Test
  @DisplayName("each SHINE_DB_* variable overrides only its own db value, and unrelated variables change nothing")
  void environmentOverridesOneByOne() {
    assertThat(ConfigLoader.parse(FULL_EXAMPLE, Map.of("SHINE_DB_HOST", "h2")).db())
        .isEqualTo(new AppConfig.Db("h2", 6432, "shine_s2", "shine", "pw", 8, 1500, 0));
    assertThat(ConfigLoader.parse(FULL_EXAMPLE, Map.of("SHINE_DB_PORT", "1")).db())
        .isEqualTo(new AppConfig.Db("db.internal", 1, "shine_s2", "shine", "pw", 8, 1500, 0));
    assertThat(ConfigLoader.parse(FULL_EXAMPLE, Map.of("SHINE_DB_NAME", "n")).db())
        .isEqualTo(new AppConfig.Db("db.internal", 6432, "n", "shine", "pw", 8, 1500, 0));
    assertThat(ConfigLoader.parse(FULL_EXAMPLE, Map.of("SHINE_DB_USER", "u")).db())
        .isEqualTo(new AppConfig.Db("db.internal", 6432, "shine_s2", "u", "pw", 8, 1500, 0));
    assertThat(ConfigLoader.parse(FULL_EXAMPLE, Map.of("SHINE_DB_PASSWORD", "p")).db())
        .isEqualTo(new AppConfig.Db("db.internal", 6432, "shine_s2", "shine", "p", 8, 1500, 0));
    assertThat(ConfigLoader.parse(FULL_EXAMPLE, Map.of("PATH", "/bin", "SHINE_HTTP_PORT", "1")))
        .isEqualTo(parse(FULL_EXAMPLE));
  }

  @Test
  @DisplayName("environment overrides apply over the defaults too")
  void environmentOverridesDefaults() {
    AppConfig config = ConfigLoader.parse("{}", Map.of("SHINE_DB_NAME", "other", "SHINE_DB_PORT", "5433"));

    assertThat(config.db()).isEqualTo(new AppConfig.Db("127.0.0.1", 5433, "other", "postgres", "", 16));
  }

  @ParameterizedTest(name = "SHINE_DB_PORT={0}")
  @ValueSource(strings = {"abc", "5432x", "0", "70000", "-1"})
  @DisplayName("an invalid SHINE_DB_PORT is a config error")
  void invalidEnvironmentPort(String port) {
    assertThatThrownBy(() -> ConfigLoader.parse("{}", Map.of("SHINE_DB_PORT", port)))
        .isExactlyInstanceOf(ConfigException.class)
        .hasMessageContaining("port");
  }

  // ---- invalid values ----

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"[0, 1000, 1000]", "[0, 2000, 1000]", "[0, 30000, 300000, 299999]", "[]"})
  @DisplayName("a delivery schedule that is not strictly increasing is rejected")
  void nonIncreasingSchedule(String schedule) {
    assertRejected("{\"delivery\": {\"scheduleMs\": " + schedule + "}}", "scheduleMs");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"86400001", "-86400001"})
  @DisplayName("a test clock offset beyond one day is rejected")
  void badClockOffset(String offset) {
    assertRejected("{\"testing\": {\"clockOffsetMs\": " + offset + "}}", "clockOffsetMs");
  }

  @ParameterizedTest(name = "\"{0}\"")
  @ValueSource(strings = {"", "S1", "s|1", "s 1", "é", "abcdefghijklmnopqrstuvwxyz_0123456", "dm.example.org/x"})
  @DisplayName("a serverLogin that is neither a DNS-like name [a-z0-9.-]{1,253} nor [a-z0-9_.-]{1,32} is rejected")
  void badServerLogin(String login) {
    assertRejected("{\"serverLogin\": \"" + login + "\"}", "serverLogin");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"http://127.0.0.1:7101/ws", "https://h/ws", "127.0.0.1:7101", "ws://", "ws:/ws", "", "not a url"})
  @DisplayName("a publicUrl that is not a ws:// or wss:// URL with a host is rejected")
  void nonWsPublicUrl(String url) {
    assertRejected("{\"publicUrl\": \"" + url + "\"}", "publicUrl");
  }

  @Test
  @DisplayName("a peer with a bad login or a non-ws url is rejected naming the peer")
  void badPeer() {
    assertRejected("{\"peers\": [{\"serverLogin\": \"S2\", \"url\": \"ws://h/ws\"}]}", "peers[0].serverLogin");
    assertRejected("{\"peers\": [{\"serverLogin\": \"s2\", \"url\": \"http://h/ws\"}]}", "peers[0].url");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {
      "{\"peers\": [{\"serverLogin\": \"s2\", \"url\": \"ws://h/ws\", \"publicKeyB64\": \"AAEC\"}]}",
      "{\"peers\": [{\"serverLogin\": \"s2\", \"url\": \"ws://h/ws\", \"publicKeyB64\": \"not base64!\"}]}",
      "{\"peers\": [{\"serverLogin\": \"s2\", \"url\": \"ws://h/ws\", \"legacy\": \"yes\"}]}",
      "{\"peers\": [{\"serverLogin\": \"s2\", \"url\": \"ws://h/ws\", \"legacy\": true, \"protocol\": \"v3\"}]}",
      "{\"peers\": [{\"serverLogin\": \"s2\", \"url\": \"ws://h/ws\", \"protocol\": \"v4\"}]}",
      "{\"peers\": [{\"serverLogin\": \"s2\", \"url\": \"ws://h/ws\", \"insecure\": \"yes\"}]}",
      "{\"egress\": {\"denyCidrs\": [\"127.0.0.9/33\"]}}",
      "{\"egress\": {\"allowCidrs\": [\"localhost\"]}}",
      "{\"egress\": {\"allowCidrs\": [\"127.0.0.1/x\"]}}",
      "{\"egress\": {\"keyFetchesPerS\": 0}}",
      "{\"directory\": {\"registration\": \"closed\"}}",
      "{\"quotas\": {\"settingsCount\": 0}}",
      "{\"publicUrlAliases\": [\"http://127.0.0.1:7101/ws\"]}",
      "{\"peers\": [{\"serverLogin\": \"s2\", \"url\": \"ws://h/ws\"}, {\"serverLogin\": \"s2\", \"url\": \"ws://g/ws\"}]}",
      "{\"cluster\": {\"tls\": {\"keyFile\": \"k.pem\"}}}",
      "{\"cluster\": {\"tls\": {\"keyFile\": \"k\", \"certFile\": \"c\", \"trustFile\": \"t\", \"x\": 1}}}",
      "{\"serverKeyFile\": 7}",
      "{\"serverKeyFile\": \" \"}"})
  @DisplayName("a bad pinned key, legacy flag, duplicate peer, incomplete cluster.tls or serverKeyFile is rejected")
  void badV2Keys(String json) {
    assertRejected(json, "config");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {
      "{\"peers\": [{\"serverLogin\": \"s2\"}]}",
      "{\"peers\": [{\"url\": \"ws://127.0.0.1:7102/ws\"}]}",
      "{\"peers\": [{}]}"})
  @DisplayName("a peer missing a required key is a config error, not a crash")
  void incompletePeer(String json) {
    assertRejected(json, "peers[0]");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {
      "{\"http\": {\"port\": 70000}}",
      "{\"http\": {\"port\": -1}}",
      "{\"db\": {\"port\": 0}}",
      "{\"db\": {\"poolSize\": 0}}",
      "{\"delivery\": {\"maxInFlight\": 0}}",
      "{\"delivery\": {\"leaseMs\": 0}}",
      "{\"sync\": {\"pageSize\": 0}}",
      "{\"limits\": {\"maxFrameBytes\": 10}}",
      "{\"instances\": {\"gateway\": 0}}",
      "{\"instances\": {\"directory\": 0}}",
      "{\"db\": {\"connectTimeoutMs\": 0}}",
      "{\"db\": {\"statementTimeoutMs\": -1}}",
      "{\"hub\": {\"refreshGraceS\": -1}}",
      "{\"hub\": {\"challengesPerLogin\": 0}}",
      "{\"limits\": {\"maxConnections\": 0}}",
      "{\"limits\": {\"maxConnectionsPerIp\": -1}}",
      "{\"limits\": {\"authTimeoutMs\": 0}}",
      "{\"limits\": {\"idleTimeoutMs\": 0}}",
      "{\"limits\": {\"maxResponseBytes\": 100000}}",
      "{\"limits\": {\"sendsPerUserPerS\": 0}}",
      "{\"limits\": {\"writeQueueBytes\": 10}}",
      "{\"limits\": {\"slowReaderCloseMs\": 0}}",
      "{\"limits\": {\"verifyQueue\": 0}}",
      "{\"limits\": {\"cardsPerIpPerMin\": 0}}",
      "{\"limits\": {\"openOpsPerIpPerS\": 0}}",
      "{\"limits\": {\"openOpsPerLoginPerS\": 0}}",
      "{\"limits\": {\"inboundPerRecipientPerS\": 0}}",
      "{\"limits\": {\"opsPerPeerPerS\": 0}}",
      "{\"delivery\": {\"maxInFlightPerDestination\": 0}}",
      "{\"delivery\": {\"maxInFlightPerSender\": 0}}",
      "{\"delivery\": {\"timeoutsToDown\": 0}}",
      "{\"sync\": {\"maxPagesPerRun\": 0}}",
      "{\"sync\": {\"markAllPerUserPerMin\": 0}}",
      "{\"sync\": {\"forwardHoldMs\": -1}}",
      "{\"admin\": {\"port\": 70000}}",
      "{\"cluster\": {\"host\": \"\"}}",
      "{\"cluster\": {\"host\": \"0.0.0.0\"}}",
      "{\"cluster\": {\"host\": \"::\"}}"})
  @DisplayName("out-of-range numbers are rejected")
  void outOfRangeNumbers(String json) {
    assertRejected(json, "invalid config");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {
      "{\"http\": 7101}",
      "{\"http\": {\"port\": \"abc\"}}",
      "{\"http\": {\"port\": 99999999999}}",
      "{\"http\": {\"port\": {}}}",
      "{\"serverLogin\": {\"name\": \"s1\"}}",
      "{\"serverLogin\": [\"s1\"]}",
      "{\"db\": {\"host\": []}}",
      "{\"peers\": {\"serverLogin\": \"s2\"}}",
      "{\"peers\": [\"ws://127.0.0.1:7102/ws\"]}",
      "{\"delivery\": {\"scheduleMs\": 0}}",
      "{\"delivery\": {\"scheduleMs\": \"0,1000\"}}",
      "{\"delivery\": {\"scheduleMs\": [0, \"x\"]}}",
      "{\"cluster\": {\"enabled\": \"maybe\"}}",
      "{\"instances\": [1, 1]}"})
  @DisplayName("a value of a structurally wrong JSON type is rejected")
  void wrongStructuralType(String json) {
    assertRejected(json);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {
      "{\"http\": {\"port\": \"7101\"}}",
      "{\"serverLogin\": 5}",
      "{\"serverLogin\": true}",
      "{\"delivery\": {\"maxInFlight\": 1.5}}",
      "{\"delivery\": {\"scheduleMs\": [0, 5.7]}}",
      "{\"delivery\": {\"scheduleMs\": [0, \"5\"]}}",
      "{\"cluster\": {\"enabled\": 1}}",
      "{\"cluster\": {\"enabled\": \"true\"}}"})
  @DisplayName("a scalar of the wrong JSON type is rejected rather than silently coerced")
  void wrongScalarTypeIsNotCoerced(String json) {
    assertRejected(json);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {
      "{\"serverLogin\": null}",
      "{\"publicUrl\": null}",
      "{\"http\": null}",
      "{\"http\": {\"host\": null}}",
      "{\"http\": {\"port\": null}}",
      "{\"db\": {\"host\": null}}",
      "{\"db\": {\"database\": null}}",
      "{\"db\": {\"user\": null}}",
      "{\"db\": {\"password\": null}}",
      "{\"peers\": null}",
      "{\"delivery\": {\"scheduleMs\": null}}",
      "{\"delivery\": {\"scheduleMs\": [0, null]}}"})
  @DisplayName("null is never accepted as a value")
  void nullValues(String json) {
    assertRejected(json);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"", "   ", "not json", "{\"serverLogin\": ", "[]", "\"s1\"", "42", "null",
      "{} {\"serverLogin\": \"s9\"}", "{\"serverLogin\": \"s2\"} trailing"})
  @DisplayName("text that is not exactly one JSON object is rejected")
  void notOneJsonObject(String text) {
    assertRejected(text);
  }
}
