package org.shine.server.directory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.shine.server.cli.AdminCommand;
import org.shine.server.client.ShineClient;
import org.shine.server.client.ShineClientException;
import org.shine.server.dm.KeyFile;
import org.shine.server.protocol.ErrorCode;
import org.shine.server.support.Eventually;
import org.shine.server.support.MutableClock;
import org.shine.server.support.StubPeer;
import org.shine.server.support.TestServer;
import org.shine.server.support.TestWorld;
import org.shine.server.util.Json;
import picocli.CommandLine;

/**
 * Who may register a login on a server (PROTOCOL §13 admission, {@code directory.registration}) and how fast cards
 * may come from one address ({@code limits.cardsPerIpPerMin}), over real WebSockets: s1, s2 and s3 in the default
 * mode, {@code served}, each a configured peer of the others (their peer connections are server sessions); "inv" in
 * {@code invite} mode with its admin API on, on a clock the test moves; "any" in {@code open} mode.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
class AdmissionIT {
  private static final long WAIT_MS = 30_000;
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final MutableClock CLOCK = MutableClock.now();
  private static final String SERVED = "{\"directory\":{\"registration\":\"served\"}}";
  private static TestWorld world;
  private static Vertx vertx;
  private static TestServer s1;
  private static TestServer s2;
  private static TestServer s3;
  private static TestServer inv;
  private static TestServer any;
  private static int adminPort;

  @BeforeAll
  static void start() {
    world = TestWorld.on(Vertx.vertx());
    vertx = world.vertx();
    world.sites("s1", "s2", "s3", "inv", "any");
    s1 = world.server("s1", SERVED);
    s2 = world.server("s2", SERVED);
    s3 = world.server("s3", SERVED);
    adminPort = TestServer.freePort();
    world.clock(CLOCK);
    inv = world.server("inv", TestServer.merge(TestServer.json("{\"directory\":{\"registration\":\"invite\"}}"),
        TestServer.admin(adminPort)));
    any = world.server("any", "{\"directory\":{\"registration\":\"open\"},\"limits\":{\"cardsPerIpPerMin\":3}}");
  }

  @AfterAll
  static void stop() {
    world.close();
    vertx.close().await();
  }

  // ---- served ----------------------------------------------------------------------------------------------

  @Test
  @DisplayName("served: a client registers a new login only on a server its card names (else 403 NOT_ACCESS_SERVER,"
      + " nothing stored); the servers it names then relay it to their peers on their server sessions")
  void servedClientNamesThisServer() {
    KeyFile carol = KeyFile.generate("carol");

    assertRefused(publish(s2, "carol", carol, routes(s1), null), 403, ErrorCode.NOT_ACCESS_SERVER);
    assertRefused(card(s2, "carol"), 404, ErrorCode.USER_NOT_FOUND);

    assertThat(await(publish(s1, "carol", carol, routes(s1), null)).path("changed").asBoolean()).isTrue();
    Eventually.until("s1 relays carol's card to s2 and s3", WAIT_MS,
        () -> card(s2, "carol").succeeded() && card(s3, "carol").succeeded());
    assertThat(await(card(s3, "carol")).at("/card/publicKeyB64").asText()).isEqualTo(carol.publicKeyB64());
  }

  @Test
  @DisplayName("served: the rule is for logins new here; an update of a known login may name other servers only")
  void servedUpdatesAsBefore() {
    KeyFile dan = KeyFile.generate("dan");
    await(publish(s1, "dan", dan, routes(s1), null));

    JsonNode moved = await(publishVersion(s1, "dan", dan, routes(s2), 2));

    assertThat(moved.path("version").asLong()).isEqualTo(2);
    assertThat(await(card(s1, "dan")).at("/card/accessServers/0/serverLogin").asText()).isEqualTo("s2");
  }

  @Test
  @DisplayName("served: a server session introduces a new login only when its card names that server or this one")
  void servedServerSession() {
    ShineClient fromS2 = world.serverSession(s2, s3);

    assertThat(await(fromS2.publishCard("erin", KeyFile.generate("erin"), routes(s2), 1)).path("changed")
        .asBoolean()).as("a user of the relaying server").isTrue();
    assertThat(await(fromS2.publishCard("gus", KeyFile.generate("gus"), routes(s3), 1)).path("changed")
        .asBoolean()).as("a user of this server").isTrue();
    assertRefused(fromS2.publishCard("fay", KeyFile.generate("fay"), routes(s1), 1), 403,
        ErrorCode.NOT_ACCESS_SERVER);
    assertRefused(card(s3, "fay"), 404, ErrorCode.USER_NOT_FOUND);
  }

  @Test
  @DisplayName("served: nobody squats a login on a server that does not serve it: mallory's card for hana on s3 is"
      + " refused, and hana's own card, registered on s1, reaches s3 by relay with hana's key")
  void servedNoLoginSquatting() {
    KeyFile mallory = KeyFile.generate("hana");
    KeyFile hana = KeyFile.generate("hana");

    assertRefused(publish(s3, "hana", mallory, routes(s1), null), 403, ErrorCode.NOT_ACCESS_SERVER);
    await(publish(s1, "hana", hana, routes(s1), null));

    Eventually.until("hana's card reaches s3", WAIT_MS, () -> card(s3, "hana").succeeded());
    assertThat(await(card(s3, "hana")).at("/card/publicKeyB64").asText()).isEqualTo(hana.publicKeyB64());
  }

  @Test
  @DisplayName("served: a card that does not name this server no longer claims a server's name here: the real"
      + " server's users are accepted later (in open mode the same card claims the name, and they get 409"
      + " ROUTE_CONFLICT)")
  void servedNoServerNameSquatting() {
    String realHost = StubPeer.nextHost();
    Map.Entry<String, String> fake = Map.entry(realHost, "ws://" + realHost + ":1/ws");
    Map.Entry<String, String> real = Map.entry(realHost, "ws://" + realHost + ":7101/ws");

    assertRefused(publish(s1, "mallory", KeyFile.generate("mallory"), List.of(fake), null), 403,
        ErrorCode.NOT_ACCESS_SERVER);
    assertThat(knownUrl(s1, realHost)).isNull();
    assertThat(await(publish(s1, "ivan", KeyFile.generate("ivan"), List.of(Map.entry("s1", s1.url()), real), null))
        .path("changed").asBoolean()).isTrue();

    // the same on a server in open mode, for another server's name (ivan's card names this one, and s1 relays it)
    String otherHost = StubPeer.nextHost();
    Map.Entry<String, String> otherFake = Map.entry(otherHost, "ws://" + otherHost + ":1/ws");
    await(publishFrom("127.0.0.5", any, "mallory", KeyFile.generate("mallory"), List.of(otherFake)));
    assertThat(knownUrl(any, otherHost)).isEqualTo(otherFake.getValue());
    assertRefused(publishFrom("127.0.0.5", any, "ivy", KeyFile.generate("ivy"),
        List.of(Map.entry("any", any.url()), Map.entry(otherHost, "ws://" + otherHost + ":7101/ws"))), 409,
        ErrorCode.ROUTE_CONFLICT);
  }

  // ---- invite ----------------------------------------------------------------------------------------------

  @Test
  @DisplayName("invite: POST /admin/v1/invites answers a code valid 7 days of which only the SHA-256 is stored; a new"
      + " login here needs one (403 INVITE_REQUIRED), a wrong one is 403 INVITE_INVALID, and a code admits one login")
  void inviteSingleUse() {
    JsonNode invite = invite("");
    String code = invite.path("code").asText();
    assertThat(code).matches("[A-Za-z0-9_-]{24}");
    assertThat(invite.path("expiresAtMs").asLong()).isEqualTo(CLOCK.millis() + InviteCodes.MAX_LIFETIME_S * 1000);
    Row stored = await(world.sql(inv).pool().preparedQuery("SELECT used_at_ms, (SELECT count(*) FROM invite t"
        + " WHERE t::text LIKE '%' || $2 || '%') FROM invite WHERE code_hash = $1")
        .execute(Tuple.of(Buffer.buffer(InviteCodes.hash(code)), code))).iterator().next();
    assertThat(stored.getValue(0)).as("used").isNull();
    assertThat(stored.getLong(1)).as("rows holding the code itself").isZero();

    KeyFile jane = KeyFile.generate("jane");
    assertRefused(publish(inv, "jane", jane, routes(inv), null), 403, ErrorCode.INVITE_REQUIRED);
    assertRefused(publish(inv, "jane", jane, routes(inv), "not-a-code-of-this-server"), 403, ErrorCode.INVITE_INVALID);
    assertThat(await(publish(inv, "jane", jane, routes(inv), code)).path("changed").asBoolean()).isTrue();
    assertRefused(publish(inv, "joel", KeyFile.generate("joel"), routes(inv), code), 403, ErrorCode.INVITE_INVALID);
    assertRefused(card(inv, "joel"), 404, ErrorCode.USER_NOT_FOUND);

    assertThat(await(publishVersion(inv, "jane", jane, routes(inv), 2)).path("changed").asBoolean())
        .as("an update of a known login needs no code").isTrue();
    assertThat(await(world.sql(inv).pool().preparedQuery("SELECT used_by FROM invite WHERE code_hash = $1")
        .execute(Tuple.of(Buffer.buffer(InviteCodes.hash(code))))).iterator().next()
        .getString(0)).isEqualTo("jane");
  }

  @Test
  @DisplayName("invite: a code expires (here after 60 s), and a card refused after admission leaves its code unused")
  void inviteExpiryAndRollback() {
    String shortLived = invite("?expiresInS=60").path("code").asText();
    CLOCK.advance(Duration.ofSeconds(61));
    assertRefused(publish(inv, "kim", KeyFile.generate("kim"), routes(inv), shortLived), 403,
        ErrorCode.INVITE_INVALID);

    // GIVEN a server name claimed here at one URL by a known user's card ...
    String host = StubPeer.nextHost();
    KeyFile lea = KeyFile.generate("lea");
    await(publish(inv, "lea", lea, routes(inv), invite("").path("code").asText()));
    await(publishVersion(inv, "lea", lea, List.of(Map.entry("inv", inv.url()),
        Map.entry(host, "ws://" + host + ":7101/ws")), 2));
    // ... WHEN a new login's card names it at another URL, THEN it is 409 and its code stays good
    String code = invite("").path("code").asText();
    KeyFile kim = KeyFile.generate("kim");
    assertRefused(publish(inv, "kim", kim, List.of(Map.entry("inv", inv.url()),
        Map.entry(host, "ws://" + host + ":7102/ws")), code), 409, ErrorCode.ROUTE_CONFLICT);
    assertThat(await(publish(inv, "kim", kim, routes(inv), code)).path("changed").asBoolean()).isTrue();
  }

  @Test
  @DisplayName("invite: a server session may relay its own users' cards, but registering a login on this server"
      + " takes a code whoever brings the card")
  void inviteAndServerSessions() {
    ShineClient fromS1 = world.serverSession(s1, inv);

    assertThat(await(fromS1.publishCard("mia", KeyFile.generate("mia"), routes(s1), 1)).path("changed")
        .asBoolean()).isTrue();
    assertRefused(fromS1.publishCard("ned", KeyFile.generate("ned"), List.of(Map.entry("s1", s1.url()),
        Map.entry("inv", inv.url())), 1), 403, ErrorCode.INVITE_REQUIRED);
    assertRefused(fromS1.publishCard("ola", KeyFile.generate("ola"), routes(s2), 1), 403,
        ErrorCode.NOT_ACCESS_SERVER);
  }

  @Test
  @DisplayName("invite: admin invite (CLI) prints a code that registers a user; bad lifetimes are 400 INVALID_FIELD")
  void inviteCli() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = new CommandLine(new AdminCommand()).setOut(new PrintWriter(out, true))
        .setErr(new PrintWriter(err, true)).execute("--url", "http://127.0.0.1:" + adminPort, "invite",
            "--expires-in-s", "3600");
    assertThat(exit).as(err.toString()).isZero();
    String code = out.toString().lines().findFirst().orElseThrow();
    assertThat(out.toString()).contains("one use, valid until", "directory.registration here: invite");

    assertThat(await(publish(inv, "pia", KeyFile.generate("pia"), routes(inv), code)).path("changed").asBoolean())
        .isTrue();
    for (String query : List.of("?expiresInS=59", "?expiresInS=604801", "?expiresInS=soon")) {
      HttpResponse<String> refused = post("/invites" + query);
      assertThat(refused.statusCode()).as(query).isEqualTo(400);
      assertThat(refused.body()).contains(ErrorCode.INVALID_FIELD);
    }
  }

  // ---- open, and cards per address ----------------------------------------------------------------------

  @Test
  @DisplayName("open: any card is taken; limits.cardsPerIpPerMin 3: the fourth card a minute from one address is"
      + " 429 RATE_LIMITED and not stored, while another address and a server session still publish")
  void openAndCardsPerAddress() {
    String[] fromHere = {"qa1", "qa2", "qa3"};
    for (String login : fromHere) {
      assertThat(await(publishFrom("127.0.0.3", any, login, KeyFile.generate(login), routes(s1))).path("changed")
          .asBoolean()).as("a card naming only s1 in open mode").isTrue();
    }

    assertRefused(publishFrom("127.0.0.3", any, "qa4", KeyFile.generate("qa4"), routes(s1)), 429,
        ErrorCode.RATE_LIMITED);
    assertRefused(card(any, "qa4"), 404, ErrorCode.USER_NOT_FOUND);
    assertThat(await(publishFrom("127.0.0.4", any, "qa4", KeyFile.generate("qa4"), routes(s1))).path("changed")
        .asBoolean()).isTrue();
    ShineClient fromS2 = world.keep(s2.serverSession(vertx, any));
    for (int i = 0; i < 5; i++) {
      await(fromS2.publishCard("qb" + i, KeyFile.generate("qb" + i), routes(s2), 1));
    }
  }

  // ---- helpers ---------------------------------------------------------------------------------------------

  private static List<Map.Entry<String, String>> routes(TestServer... servers) {
    return TestWorld.routes(servers);
  }

  private static Future<JsonNode> publish(TestServer on, String login, KeyFile key,
      List<Map.Entry<String, String>> routes, String inviteCode) {
    ShineClient client = world.anonymous(on);
    return client.publishCard(login, key, routes, 1, inviteCode);
  }

  private static Future<JsonNode> publishVersion(TestServer on, String login, KeyFile key,
      List<Map.Entry<String, String>> routes, long version) {
    return world.anonymous(on).publishCard(login, key, routes, version);
  }

  private static Future<JsonNode> publishFrom(String localAddress, TestServer on, String login, KeyFile key,
      List<Map.Entry<String, String>> routes) {
    ShineClient client = world.keep(await(ShineClient.connectFrom(vertx, on.url(), localAddress)));
    return client.publishCard(login, key, routes, 1);
  }

  private static Future<JsonNode> card(TestServer on, String login) {
    Future<JsonNode> answer = world.anonymous(on).request("GetUserCard", ShineClient.object().put("login", login));
    answer.otherwiseEmpty().await();
    return answer;
  }

  private static String knownUrl(TestServer server, String serverLogin) {
    var rows = await(world.sql(server).pool().preparedQuery("SELECT url FROM known_server WHERE server_login = $1")
        .execute(Tuple.of(serverLogin)));
    return rows.size() == 0 ? null : rows.iterator().next().getString(0);
  }

  private static JsonNode invite(String query) {
    HttpResponse<String> response = post("/invites" + query);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    try {
      return Json.MAPPER.readTree(response.body());
    } catch (Exception e) {
      throw new AssertionError(response.body(), e);
    }
  }

  private static HttpResponse<String> post(String path) {
    try {
      return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/admin/v1" + path))
          .timeout(Duration.ofSeconds(20)).POST(HttpRequest.BodyPublishers.noBody()).build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static void assertRefused(Future<?> answer, int status, String code) {
    assertThatThrownBy(() -> await(answer)).isInstanceOfSatisfying(ShineClientException.class, e -> {
      assertThat(e.status()).as("status of [%s]", e.getMessage()).isEqualTo(status);
      assertThat(e.code()).as("code of [%s]", e.getMessage()).isEqualTo(code);
    });
  }

  private static <T> T await(Future<T> future) {
    try {
      return future.await(WAIT_MS, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("no answer within " + WAIT_MS + " ms", e);
    }
  }
}
